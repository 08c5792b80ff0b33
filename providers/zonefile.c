/*
 * The zonefile provider (ddup.ini(5), type = zonefile), for servers that
 * take no dynamic updates (NSD, gdnsd, Knot without DDNS, BIND with a
 * static zone): ddup writes the records of its domains into a file,
 * alone (for an $INCLUDE) or in the operator's template with {serial}
 * and {records}, then runs `reload`.
 *
 * One file may hold several domains (every domain of the provider):
 * replace() reads the file, changes one name's records and writes it
 * all again.  The write is atomic (a temporary file in the same folder,
 * fsync, rename, fsync of the folder): a server that reads the file, or
 * a crash, sees the old file or the new one, never half of one, and a
 * failure leaves the old one as it was.
 *
 * What read() gives is what the file holds, not what the server serves:
 * a reload may have failed after the file was written.  PCAP_WRITE_UNSURE
 * makes the core write (and reload) whenever it has no stored set to
 * trust, whatever the file holds.
 */

#include <sys/types.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "proc.h"
#include "provider.h"
#include "providers/zonefile.h"
#include "util.h"

/* nsd-control and knotc answer in well under a second; a hung one ends. */
#define ZF_RELOAD_TIMEOUT_MS	30000LL
#define ZF_OUT_MAX		((size_t)4096)

static const struct provider_key zonefile_keys[] = {
	{ "file", PK_REQUIRED },
	{ "zone", 0 },
	{ "template", 0 },
	{ "reload", 0 },
	{ NULL, 0 }
};

struct zonefile {
	char		 *file;
	char		 *tmpl;		/* NULL: the block alone */
	char		**argv;		/* `reload` split; NULL: none */
	size_t		  nargv;
	char		 *dir;		/* the configuration file's folder */
};

static int
zonefile_check(const struct provider_cfg *pc, const char **key, char *err,
    size_t errlen)
{
	const char *v, *p, *w;
	size_t len;

	*key = "file";
	v = provider_cfg_get(pc, "file");
	if (v[0] != '/' || v[strlen(v) - 1] == '/') {
		snprintf(err, errlen, "file: \"%s\" is not an absolute path "
		    "of a file", v);
		return -1;
	}
	*key = "template";
	if ((v = provider_cfg_get(pc, "template")) != NULL && v[0] != '/') {
		snprintf(err, errlen, "template: \"%s\" is not an absolute "
		    "path", v);
		return -1;
	}
	if (v != NULL && strcmp(v, provider_cfg_get(pc, "file")) == 0) {
		snprintf(err, errlen, "template: the same file as file");
		return -1;
	}
	*key = "reload";
	if ((v = provider_cfg_get(pc, "reload")) != NULL) {
		p = v;
		if ((w = word_next(&p, &len)) == NULL || w[0] != '/') {
			snprintf(err, errlen, "reload: \"%s\" does not begin "
			    "with an absolute path", v);
			return -1;
		}
	}
	if (provider_check_zone(pc, "zone", key, err, errlen) == -1)
		return -1;
	*key = NULL;
	return 0;
}

static void
zonefile_free(void *priv)
{
	struct zonefile *z = priv;
	size_t i;

	if (z == NULL)
		return;
	for (i = 0; i < z->nargv; i++)
		free(z->argv[i]);
	free(z->argv);
	free(z->file);
	free(z->tmpl);
	free(z->dir);
	free(z);
}

static void *
zonefile_create(const struct provider_cfg *pc, char *err, size_t errlen)
{
	struct zonefile *z;
	const char *v, *p, *w;
	size_t len;

	(void)err;
	(void)errlen;
	z = xcalloc(1, sizeof(*z));
	z->file = xstrdup(provider_cfg_get(pc, "file"));
	if ((v = provider_cfg_get(pc, "template")) != NULL)
		z->tmpl = xstrdup(v);
	z->dir = xstrdup(pc->dir != NULL ? pc->dir : ".");
	/* Words split on white space, no quoting: no shell, as exec's args. */
	p = (v = provider_cfg_get(pc, "reload")) != NULL ? v : "";
	while ((w = word_next(&p, &len)) != NULL) {
		z->argv = xrealloc(z->argv, (z->nargv + 2) * sizeof(*z->argv));
		z->argv[z->nargv] = xmalloc(len + 1);
		memcpy(z->argv[z->nargv], w, len);
		z->argv[z->nargv][len] = '\0';
		z->argv[++z->nargv] = NULL;
	}
	return z;
}

/*
 * The whole of path into *buf (NUL-terminated).  1 read, 0 when it does
 * not exist (*buf NULL), -1 with err set.
 */
static int
slurp(const char *path, char **buf, size_t *len, char *err, size_t errlen)
{
	struct stat sb;
	ssize_t r;
	int fd, rv = -1;

	*buf = NULL;
	*len = 0;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		goto out;
	}
	if ((size_t)sb.st_size > ZF_FILE_MAX) {
		snprintf(err, errlen, "%s: larger than %zu bytes", path,
		    ZF_FILE_MAX);
		goto out;
	}
	*buf = xmalloc((size_t)sb.st_size + 1);
	/* A file that grows meanwhile is read up to the size it had. */
	while (*len < (size_t)sb.st_size) {
		r = read(fd, *buf + *len, (size_t)sb.st_size - *len);
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		*len += (size_t)r;
	}
	(*buf)[*len] = '\0';
	rv = 1;
out:
	if (rv == -1) {
		free(*buf);
		*buf = NULL;
		*len = 0;
	}
	close(fd);
	return rv;
}

/* The file as ddup left it: 0, or -1 with err set and f empty. */
static int
load(const struct zonefile *z, struct zf_file *f, char *err, size_t errlen)
{
	char	*buf, why[256];
	size_t	 len;
	int	 r;

	memset(f, 0, sizeof(*f));
	if ((r = slurp(z->file, &buf, &len, err, errlen)) <= 0)
		return r;
	r = zf_parse(buf, len, f, why, sizeof(why));
	if (r == -1)
		snprintf(err, errlen, "%s: %s", z->file, why);
	/*
	 * Without a template, a file of someone else's (no block, not
	 * empty) is not taken over: a `file` that names the zone's own file
	 * by mistake would lose it.  With one, the file is the zone's, made
	 * from the template: before ddup's first write it is the operator's
	 * (the server needs it to start).
	 */
	else if (!f->has_block && len > 0 && z->tmpl == NULL) {
		snprintf(err, errlen, "%s: holds no ddup-check records block "
		    "(\"%s\"): not ddup-check's, left as it is", z->file,
		    ZF_BEGIN);
		r = -1;
	}
	free(buf);
	return r;
}

static enum perr
zonefile_read(void *priv, const char *fqdn, struct rrset *sets,
    size_t nsets, char *err, size_t errlen)
{
	struct zonefile *z = priv;
	struct zf_file f;
	char why[256];
	size_t i;
	enum perr rv = PERR_OK;

	for (i = 0; i < nsets; i++)
		rrset_clear(&sets[i]);
	if (load(z, &f, err, errlen) == -1)
		return PERR_INVALID;
	if (zf_sets(&f, fqdn, sets, nsets, why, sizeof(why)) == -1) {
		snprintf(err, errlen, "%s: %s", z->file, why);
		rv = PERR_INVALID;
	}
	zf_free(&f);
	return rv;
}

/* write(2) all of buf: 0 or -1 (errno). */
static int
write_all(int fd, const char *buf, size_t len)
{
	ssize_t w;

	while (len > 0) {
		if ((w = write(fd, buf, len)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

/*
 * buf becomes path's content, atomically, mode 0644: a temporary file
 * in path's folder (a rename does not cross file systems), written and
 * fsync'd, renamed over path, then the folder fsync'd so the rename
 * itself survives a crash.  0, or -1 with err set: path untouched,
 * unless only that last fsync failed.
 */
static int
write_atomic(const char *path, const char *buf, size_t len, char *err,
    size_t errlen)
{
	char	*tmp = NULL, *dir;
	const char *slash = strrchr(path, '/');
	size_t	 n;
	int	 fd = -1, dfd, rv = -1;

	/* zonefile_check(): an absolute path, so there is a slash. */
	dir = xmalloc((size_t)(slash - path) + 2);
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	if (dir[0] == '\0') {
		dir[0] = '/';
		dir[1] = '\0';
	}
	n = strlen(path) + 16;
	tmp = xmalloc(n);
	snprintf(tmp, n, "%s/.%s.XXXXXX", slash == path ? "" : dir, slash + 1);
	if ((fd = mkstemp(tmp)) == -1) {
		snprintf(err, errlen, "%s: cannot create a temporary file "
		    "in %s: %s", path, dir, strerror(errno));
		free(tmp);
		tmp = NULL;
		goto out;
	}
	/* mkstemp's 0600 is for secrets; a zone is read by the server. */
	if (fchmod(fd, 0644) == -1 || write_all(fd, buf, len) == -1 ||
	    fsync(fd) == -1) {
		snprintf(err, errlen, "%s: cannot write %s: %s", path, tmp,
		    strerror(errno));
		goto out;
	}
	if (close(fd) == -1) {
		fd = -1;
		snprintf(err, errlen, "%s: cannot write %s: %s", path, tmp,
		    strerror(errno));
		goto out;
	}
	fd = -1;
	if (rename(tmp, path) == -1) {
		snprintf(err, errlen, "%s: cannot rename %s over it: %s", path,
		    tmp, strerror(errno));
		goto out;
	}
	free(tmp);
	tmp = NULL;
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1 ||
	    fsync(dfd) == -1) {
		/* Renamed: the file is the new one; only its durability fails. */
		snprintf(err, errlen, "%s: cannot fsync its folder %s: %s",
		    path, dir, strerror(errno));
		if (dfd != -1)
			close(dfd);
		goto out;
	}
	close(dfd);
	rv = 0;
out:
	if (fd != -1)
		close(fd);
	if (tmp != NULL)
		unlink(tmp);
	free(tmp);
	free(dir);
	return rv;
}

/* Runs `reload`: PERR_OK, or the failure with its message in err. */
static enum perr
run_reload(const struct zonefile *z, char *err, size_t errlen)
{
	struct proc_spec ps = {
		.path = z->argv[0],
		.argv = (const char *const *)z->argv,
		.dir = z->dir,
		.input = NULL,
		.timeout_ms = ZF_RELOAD_TIMEOUT_MS,
		.out_max = ZF_OUT_MAX,
	};
	struct proc_result o;
	char line[PROC_ERR_LINE + 1], why[256];
	enum perr rv = PERR_OK;
	int started;

	if ((started = proc_run(&ps, &o, why, sizeof(why))) != 0) {
		snprintf(err, errlen, "%s written, reload %s: %s", z->file,
		    z->argv[0], why);
		rv = started == -1 ? PERR_INVALID : PERR_TEMP;
		goto out;
	}
	proc_first_line(&o, line, sizeof(line));
	if (o.timed_out) {
		snprintf(err, errlen, "%s written, reload %s: still running "
		    "after %llds: killed", z->file, z->argv[0],
		    ZF_RELOAD_TIMEOUT_MS / 1000);
		rv = PERR_NET;
	} else if (!WIFEXITED(o.status) || WEXITSTATUS(o.status) != 0) {
		if (WIFEXITED(o.status))
			snprintf(why, sizeof(why), "exit status %d",
			    WEXITSTATUS(o.status));
		else
			snprintf(why, sizeof(why), "killed by signal %d",
			    WIFSIGNALED(o.status) ? WTERMSIG(o.status) : 0);
		snprintf(err, errlen, "%s written, reload %s: %s%s%s",
		    z->file, z->argv[0], why, line[0] != '\0' ? ": " : "",
		    line);
		/* The file is right; the next run writes and reloads again. */
		rv = PERR_TEMP;
	}
out:
	proc_result_free(&o);
	return rv;
}

static enum perr
zonefile_replace(void *priv, const char *fqdn, const struct rrset *sets,
    size_t nsets, char *err, size_t errlen)
{
	struct zonefile *z = priv;
	struct zf_file f;
	char	*tbuf = NULL, *block = NULL, *out = NULL, why[256];
	size_t	 tlen = 0, blen, olen;
	unsigned long long serial;
	enum perr rv = PERR_INVALID;
	int	 r;

	if (load(z, &f, err, errlen) == -1)
		return PERR_INVALID;
	if (z->tmpl != NULL &&
	    (r = slurp(z->tmpl, &tbuf, &tlen, why, sizeof(why))) <= 0) {
		if (r == 0)
			snprintf(err, errlen, "template %s: does not exist",
			    z->tmpl);
		else
			snprintf(err, errlen, "template %s", why);
		goto out;
	}
	zf_replace(&f, fqdn, sets, nsets);
	serial = zf_serial_next(f.has_serial ? f.serial : 0,
	    (long long)time(NULL));
	block = zf_block(&f, serial, &blen);
	if ((out = zf_render(tbuf, tlen, block, blen, serial, &olen, why,
	    sizeof(why))) == NULL) {
		snprintf(err, errlen, "template %s: %s", z->tmpl, why);
		goto out;
	}
	if (write_atomic(z->file, out, olen, err, errlen) == -1) {
		rv = PERR_TEMP;
		goto out;
	}
	rv = z->argv != NULL ? run_reload(z, err, errlen) : PERR_OK;
out:
	zf_free(&f);
	free(tbuf);
	free(block);
	free(out);
	return rv;
}

const struct provider_ops zonefile_ops = {
	.type = "zonefile",
	.keys = zonefile_keys,
	/*
	 * One file written at once: atomic, a CNAME as well as addresses;
	 * what it holds is no proof the server took it.
	 */
	.caps = PCAP_CNAME | PCAP_ATOMIC | PCAP_WRITE_UNSURE,
	.ttl_min = 0,
	.ttl_max = 2147483647,
	.zone_key = "zone",
	.check = zonefile_check,
	.create = zonefile_create,
	.read = zonefile_read,
	.replace = zonefile_replace,
	.free = zonefile_free,
};
