/*
 * The state file (ddup-check(8), STATE FILE) in SQLite: opening (the run
 * lock, files that are not ours, migrations, connection settings) and
 * closing.  The rows are in state/sqlite_data.c, the schema in
 * state/sqlite_schema.c, transactions in state/sqlite_tx.c.
 *
 * A file that is not ours must be left byte for byte as it was, so it
 * is first looked at through a separate read-only connection, and only
 * then opened for writing (WAL, migrations).
 */

#include <sys/file.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "state.h"
#include "state/sqlite.h"
#include "util.h"

#define APP_ID		0x64647570	/* "ddup", in PRAGMA application_id */
#define BUSY_MS		5000

/*
 * Creates the folders of path that are missing, each mode 0700.  SQLite
 * syncs the folder that holds the WAL, not the folders above it:
 * make_parent_dirs() syncs each new folder's parent, or a power loss
 * could take the new folders, and the first run's state, away.
 */
static int
make_parent(struct sqlite_state *st)
{
	char	 err[512];

	if (make_parent_dirs(st->path, 0700, err, sizeof(err)) == -1) {
		st_set_err(st, "%s", err);
		return -1;
	}
	return 0;
}

static const char *const sidecars[] = { "", "-wal", "-shm", "-journal" };

/*
 * The state file, its journals and its folder must be ours alone: a
 * user who can write the folder could point root's run at a file of
 * their choice (a symlink) or plant a journal SQLite would replay.  The
 * folder is looked at through any symlink (state moved to another disk
 * is fine when the folder there is safe).  Returns 1 when the folder
 * does not exist (a read-only open then reads an empty state).
 */
static int
check_place(struct sqlite_state *st)
{
	struct stat	 sb;
	char		*dir, *slash, *p;
	size_t		 i, len;
	int		 rc = -1;

	dir = xstrdup(st->path);
	slash = strrchr(dir, '/');
	if (slash == NULL)
		snprintf(dir, strlen(dir) + 1, "%s", ".");
	else if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	if (stat(dir, &sb) == -1) {
		if (errno == ENOENT && !st->rw) {
			rc = 1;
			goto out;
		}
		st_set_err(st, "cannot look at folder %s: %s", dir,
		    strerror(errno));
		goto out;
	}
	if (sb.st_uid != geteuid() && sb.st_uid != 0) {
		st_set_err(st, "refused: folder %s belongs to another user "
		    "(uid %ld)", dir, (long)sb.st_uid);
		goto out;
	}
	if ((sb.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
		st_set_err(st, "refused: folder %s can be written by other "
		    "users (mode %03o); make it 0700", dir,
		    (unsigned)(sb.st_mode & 0777));
		goto out;
	}
	len = strlen(st->path) + sizeof("-journal");
	p = xmalloc(len);
	for (i = 0; i < sizeof(sidecars) / sizeof(sidecars[0]); i++) {
		snprintf(p, len, "%s%s", st->path, sidecars[i]);
		if (lstat(p, &sb) == 0 && S_ISLNK(sb.st_mode)) {
			st_set_err(st, "refused: %s is a symbolic link", p);
			free(p);
			goto out;
		}
	}
	free(p);
	rc = 0;
 out:
	free(dir);
	return rc;
}

/*
 * A state file an operator made with a wider mode (an empty file, say)
 * is made private with its journals: SQLite gives a new -wal and -shm
 * the mode of the database file.  Under the run lock.
 */
static int
make_private(struct sqlite_state *st)
{
	struct stat	 sb;
	char		*p;
	size_t		 i, len;
	int		 fd, rc = 0;

	len = strlen(st->path) + sizeof("-journal");
	p = xmalloc(len);
	for (i = 0; i < sizeof(sidecars) / sizeof(sidecars[0]); i++) {
		snprintf(p, len, "%s%s", st->path, sidecars[i]);
		fd = i == 0 ? st->lockfd : open(p, O_RDONLY | O_NOFOLLOW |
		    O_NONBLOCK | O_CLOEXEC);
		if (fd == -1)
			continue;	/* none; a symlink was refused before */
		if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) &&
		    (sb.st_mode & 077) != 0 && fchmod(fd, 0600) == -1) {
			st_set_err(st, "cannot make %s private (mode 0600): %s",
			    p, strerror(errno));
			rc = -1;
		}
		if (fd != st->lockfd)
			close(fd);
		if (rc == -1)
			break;
	}
	free(p);
	return rc;
}

/*
 * Opens the lock file descriptor and takes the run lock.  flock() locks
 * are separate from SQLite's POSIX locks, so they do not interfere (on a
 * local file system: NFS emulates flock() with POSIX locks, and SQLite
 * over NFS is unsafe anyway).
 */
static int
take_lock(struct sqlite_state *st)
{
	struct stat	 sb;

	st->lockfd = open(st->path, O_RDWR | O_CREAT | O_NOFOLLOW |
	    O_NONBLOCK | O_CLOEXEC, 0600);
	if (st->lockfd == -1) {
		if (errno == ELOOP)
			st_set_err(st, "refused: %s is a symbolic link",
			    st->path);
		else
			st_set_err(st, "cannot open: %s", strerror(errno));
		return STATE_BAD;
	}
	if (fstat(st->lockfd, &sb) == -1 || !S_ISREG(sb.st_mode)) {
		st_set_err(st, "not a regular file");
		return STATE_BAD;
	}
	if (flock(st->lockfd, LOCK_EX | LOCK_NB) == -1) {
		if (errno == EWOULDBLOCK) {
			st_set_err(st, "locked by another ddup-check run");
			return STATE_LOCKED;
		}
		st_set_err(st, "cannot lock: %s", strerror(errno));
		return STATE_BAD;
	}
	return STATE_OK;
}

#define PROBE_HOT	(-2)

/* The one integer that sql returns into *v; 0, or -1 (see db's error). */
static int
probe_int(sqlite3 *db, const char *sql, long long *v)
{
	sqlite3_stmt	*s = NULL;
	int		 rc = -1;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK &&
	    sqlite3_step(s) == SQLITE_ROW) {
		*v = sqlite3_column_int64(s, 0);
		rc = 0;
	}
	sqlite3_finalize(s);
	return rc;
}

/*
 * Looks at the file through a read-only connection, which writes
 * nothing, not even a checkpoint when it closes.  Ours carries our
 * application_id; a file without it is ours to set up only if it has no
 * schema at all (new or zero size).  The two pragmas read the file's
 * header only: the schema, which the read-write connection parses again
 * anyway, is read only when the header does not say the file is ours.
 * Returns the schema version (0: empty), PROBE_HOT (a rollback journal
 * it may not roll back) or -1.
 */
static int
probe(struct sqlite_state *st, sqlite3 *db)
{
	long long	 ver = 0, app = 0, nobj = 0;
	int		 rc = -1, in_tx;

	/*
	 * One read transaction for the three reads: a run creating the
	 * file may commit between two of them, and a version read before
	 * that commit beside tables read after it is no ddup file.
	 */
	in_tx = sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK;
	if (probe_int(db, "PRAGMA user_version", &ver) == -1 ||
	    probe_int(db, "PRAGMA application_id", &app) == -1 ||
	    ((app != APP_ID || ver == 0) &&
	    probe_int(db, "SELECT count(*) FROM sqlite_master", &nobj) == -1)) {
		if ((sqlite3_errcode(db) & 0xff) == SQLITE_NOTADB) {
			st_set_err(st, "not a ddup state file: %s",
			    sqlite3_errmsg(db));
		} else if (sqlite3_extended_errcode(db) ==
		    SQLITE_READONLY_ROLLBACK) {
			st_set_err(st, "cannot read: %s-journal holds an"
			    " unfinished transaction of another program (the"
			    " sqlite3 CLI recovers it): %s", st->path,
			    sqlite3_errmsg(db));
			rc = PROBE_HOT;
		} else
			st_db_err(st, db, "cannot read");
		goto out;
	}
	if (app != APP_ID && (app != 0 || ver != 0 || nobj != 0)) {
		st_set_err(st, "not a ddup state file (it holds another"
		    " application's data)");
		goto out;
	}
	if (ver > state_schema_version) {
		st_set_err(st, "state file schema version %lld is newer than"
		    " this ddup-check (%d)", ver, state_schema_version);
		goto out;
	}
	if (ver == 0 && nobj != 0) {
		st_set_err(st, "not a ddup state file (tables without a schema"
		    " version)");
		goto out;
	}
	rc = (int)ver;
 out:
	if (in_tx)
		sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	return rc;
}

/*
 * A run killed while it created the file can leave a rollback journal:
 * switching a new, empty file to WAL is the one write SQLite makes to a
 * state file in rollback mode.  A read-only connection cannot roll a
 * journal back, so the file would stay unreadable.  Returns 1 if
 * dbpath-journal says the database was empty (0 pages) when the
 * transaction began: rolled back, it is an empty file again, ours to
 * set up like a zero-size one.  Another program's journal is left alone.
 */
static int
hot_journal_of_new(const char *dbpath)
{
	static const unsigned char magic[8] = {
		0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7
	};
	unsigned char	 hdr[20];	/* magic, nRec, nonce, initial pages */
	char		*jpath;
	size_t		 len;
	int		 fd, rc = 0;

	len = strlen(dbpath) + sizeof("-journal");
	jpath = xmalloc(len);
	snprintf(jpath, len, "%s-journal", dbpath);
	if ((fd = open(jpath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		goto out;
	if (pread(fd, hdr, sizeof(hdr), 0) == (ssize_t)sizeof(hdr) &&
	    memcmp(hdr, magic, sizeof(magic)) == 0 &&
	    hdr[16] == 0 && hdr[17] == 0 && hdr[18] == 0 && hdr[19] == 0)
		rc = 1;
	close(fd);
 out:
	free(jpath);
	return rc;
}

/* Brings the schema to state_schema_version in one transaction. */
static int
migrate(struct sqlite_state *st)
{
	sqlite3_stmt	*s = NULL;
	char		 sql[128];
	int		 ver, i, rc = -1, in_tx = 0;

	if (sqlite3_exec(st->db, "BEGIN IMMEDIATE", NULL, NULL, NULL)
	    != SQLITE_OK) {
		st_db_err(st, st->db, "cannot start the schema upgrade");
		goto out;
	}
	in_tx = 1;
	/* Read again under the write lock. */
	if (sqlite3_prepare_v2(st->db, "PRAGMA user_version", -1, &s, NULL)
	    != SQLITE_OK || sqlite3_step(s) != SQLITE_ROW) {
		st_db_err(st, st->db, "cannot read the schema version");
		goto out;
	}
	ver = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);	/* COMMIT needs no statement running */
	s = NULL;
	if (ver > state_schema_version) {
		st_set_err(st, "state file schema version %d is newer than"
		    " this ddup-check (%d)", ver, state_schema_version);
		goto out;
	}
	if (ver == state_schema_version) {
		rc = 0;
		goto out;
	}
	for (i = ver; i < state_schema_version; i++) {
		if (sqlite3_exec(st->db, state_migrations[i], NULL, NULL, NULL)
		    != SQLITE_OK) {
			st_set_err(st, "schema upgrade to version %d: %s", i + 1,
			    sqlite3_errmsg(st->db));
			goto out;
		}
	}
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d;"
	    " PRAGMA application_id = %d", state_schema_version, APP_ID);
	if (sqlite3_exec(st->db, sql, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		st_db_err(st, st->db, "schema upgrade");
		goto out;
	}
	in_tx = 0;
	rc = 0;
 out:
	sqlite3_finalize(s);
	if (in_tx)
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

/*
 * Settings of the read-write connection.  WAL with synchronous=FULL: a
 * run commits once, so one fsync of the WAL per run costs nothing, and
 * the commit is durable when the run reports success, even across a
 * power loss; a run killed at any moment loses only its own uncommitted
 * transaction.  WAL also lets --status read while a run is writing.
 */
static int
setup_rw(struct sqlite_state *st)
{
	sqlite3_stmt	*s = NULL;
	int		 rc = -1;

	if (sqlite3_prepare_v2(st->db, "PRAGMA journal_mode = WAL", -1, &s,
	    NULL) != SQLITE_OK || sqlite3_step(s) != SQLITE_ROW) {
		st_db_err(st, st->db, "cannot set WAL mode");
		goto out;
	}
	if (sqlite3_stricmp((const char *)sqlite3_column_text(s, 0),
	    "wal") != 0) {
		st_set_err(st, "cannot set WAL mode (journal mode stays %s)",
		    sqlite3_column_text(s, 0));
		goto out;
	}
	sqlite3_finalize(s);
	s = NULL;
	/*
	 * A run reads each page about twice (the load, then the rows it
	 * changes): SQLite's default 2 MB cache was an eighth of a run's
	 * memory at N = 10,000 for reads the kernel's page cache serves.
	 */
	if (sqlite3_exec(st->db, "PRAGMA synchronous = FULL;"
	    " PRAGMA temp_store = MEMORY; PRAGMA cache_size = -512", NULL,
	    NULL, NULL) != SQLITE_OK) {
		st_db_err(st, st->db, "cannot set up");
		goto out;
	}
	if (migrate(st) == -1)
		goto out;
	if (sqlite3_exec(st->db, state_temp_schema, NULL, NULL, NULL)
	    != SQLITE_OK) {
		st_db_err(st, st->db, "cannot set up");
		goto out;
	}
	rc = 0;
 out:
	sqlite3_finalize(s);
	return rc;
}


/* Opens st->db with flags; the path is never taken as a URI. */
static int
open_db(struct sqlite_state *st, const char *dbpath, int flags)
{
	if (sqlite3_open_v2(dbpath, &st->db, flags, NULL) != SQLITE_OK) {
		st_db_err(st, st->db, "cannot open");
		return -1;
	}
	sqlite3_extended_result_codes(st->db, 1);
	/*
	 * Runs exclude each other by flock before SQLite is touched, so
	 * this never waits for another run's transaction: only for a
	 * writer's WAL recovery after a crash or its checkpoint on close
	 * (milliseconds), which would otherwise fail a reader with
	 * "database is locked".
	 */
	sqlite3_busy_timeout(st->db, BUSY_MS);
	return 0;
}

/*
 * --status and --dry-run only read, so they must work on a state file
 * or folder they cannot write (a read-only mount, another user's file):
 * SQLite would need to create the -shm file of the WAL.  There, with no
 * WAL content to miss (a run that ended cleanly leaves none), the file
 * is opened as immutable, through a URI.  Returns the URI, or NULL for
 * an ordinary open.
 */
static char *
readonly_uri(const char *path)
{
	static const char hex[] = "0123456789ABCDEF";
	struct stat	 sb;
	char		*dir, *slash, *wal, *uri = NULL, *q;
	const char	*s;
	size_t		 len;
	int		 writable;

	dir = xstrdup(path);
	if ((slash = strrchr(dir, '/')) == NULL)
		snprintf(dir, strlen(dir) + 1, "%s", ".");
	else if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	writable = faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) == 0 &&
	    faccessat(AT_FDCWD, dir, W_OK, AT_EACCESS) == 0;
	free(dir);
	if (writable)
		return NULL;
	len = strlen(path) + sizeof("-wal");
	wal = xmalloc(len);
	snprintf(wal, len, "%s-wal", path);
	if (lstat(wal, &sb) == 0 && sb.st_size > 0) {
		free(wal);
		return NULL;	/* SQLite reads it if it can; never skipped */
	}
	free(wal);
	/* Every byte but the plainest escaped: '?', '#' and '%' mean things. */
	uri = xmalloc(strlen("file:?immutable=1") + 3 * strlen(path) + 1);
	q = uri + sprintf(uri, "file:");
	for (s = path; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || strchr("/._-", c) != NULL)
			*q++ = (char)c;
		else {
			*q++ = '%';
			*q++ = hex[c >> 4];
			*q++ = hex[c & 15];
		}
	}
	snprintf(q, sizeof("?immutable=1"), "?immutable=1");
	return uri;
}

int
st_sqlite_open(const char *path, int mode, struct sqlite_state **out,
    char *err, size_t errlen)
{
	struct sqlite_state *st;
	struct stat	 sb;
	char		*dbpath = NULL, *uri = NULL;
	mode_t		 oldmask = 0;
	int		 rc = STATE_BAD, masked = 0, ver;

	*out = NULL;
	st = xcalloc(1, sizeof(*st));
	st->lockfd = -1;
	st->rw = mode == STATE_RW;
	st->path = xstrdup(path);
	/* Some builds read "file:..." as a URI; "./file:..." is a path. */
	dbpath = xmalloc(strlen(path) + 3);
	snprintf(dbpath, strlen(path) + 3, "%s%s",
	    strncmp(path, "file:", 5) == 0 ? "./" : "", path);

	if (!st->rw) {
		if ((ver = check_place(st)) != 0) {
			if (ver == 1)
				rc = STATE_OK;	/* no folder: empty state */
			goto out;
		}
		if (stat(path, &sb) == -1) {
			if (errno == ENOENT) {
				rc = STATE_OK;	/* no file: empty state */
				goto out;
			}
		} else if (!S_ISREG(sb.st_mode)) {
			st_set_err(st, "not a regular file");
			goto out;
		}
	} else {
		/*
		 * Private whatever the umask: SQLite creates its -wal and
		 * -shm files with the mode of the database file.
		 */
		oldmask = umask(077);
		masked = 1;
		if (make_parent(st) == -1 || check_place(st) != 0)
			goto out;
		if ((rc = take_lock(st)) != STATE_OK)
			goto out;
		rc = STATE_BAD;
		if (make_private(st) == -1)
			goto out;
	}

	if (!st->rw && (uri = readonly_uri(path)) != NULL) {
		if (open_db(st, uri, SQLITE_OPEN_READONLY |
		    SQLITE_OPEN_URI) == -1)
			goto out;
	} else if (open_db(st, dbpath, SQLITE_OPEN_READONLY) == -1)
		goto out;
	ver = probe(st, st->db);
	if (ver == PROBE_HOT && hot_journal_of_new(dbpath)) {
		if (!st->rw) {
			rc = STATE_OK;	/* a first run died: empty */
			goto out;
		}
		/* Under the run lock, so no live writer owns the journal. */
		sqlite3_close(st->db);
		st->db = NULL;
		if (open_db(st, dbpath, SQLITE_OPEN_READWRITE) == -1)
			goto out;
		ver = probe(st, st->db);
	}
	if (ver < 0)
		goto out;

	if (!st->rw) {
		if (ver == 0) {
			rc = STATE_OK;	/* created, never written: empty */
			goto out;
		}
		if (ver < state_schema_version) {
			st_set_err(st, "state file schema version %d is older than"
			    " this ddup-check (%d); the next run upgrades it",
			    ver, state_schema_version);
			goto out;
		}
		/*
		 * One read transaction for the whole open, so what is read
		 * is one run's state even while another run commits.
		 */
		if (sqlite3_exec(st->db, "BEGIN; SELECT count(*) FROM meta",
		    NULL, NULL, NULL) != SQLITE_OK) {
			st_db_err(st, st->db, "cannot read");
			goto out;
		}
		if (st_prepare(st) == -1 || st_read_meta(st) == -1)
			goto out;
	} else {
		sqlite3_close(st->db);
		st->db = NULL;
		if (open_db(st, dbpath, SQLITE_OPEN_READWRITE) == -1 ||
		    setup_rw(st) == -1 || st_prepare(st) == -1 ||
		    st_read_meta(st) == -1)
			goto out;
	}
	*out = st;
	st = NULL;
	rc = STATE_OK;
 out:
	if (masked)
		umask(oldmask);
	if (st != NULL && rc != STATE_OK && err != NULL && errlen > 0)
		snprintf(err, errlen, "%s", st->base.err);
	st_sqlite_close(st);
	free(dbpath);
	free(uri);
	return rc;
}

void
st_sqlite_close(struct sqlite_state *st)
{
	int	 i;

	if (st == NULL)
		return;
	if (st->in_tx)
		state_rollback(st);
	st_forget_rows(st);
	for (i = 0; i < S_MAX; i++)
		sqlite3_finalize(st->stmt[i]);
	/* Ends the read transaction of a read-only open. */
	if (st->db != NULL && !sqlite3_get_autocommit(st->db))
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_close(st->db);
	/* Last: closing any descriptor of the file drops SQLite's locks. */
	if (st->lockfd != -1)
		close(st->lockfd);
	free(st->path);
	free(st);
}
