/*
 * ddup-check: one run of ddup.  Reads the configuration, checks every
 * endpoint once (all in parallel), applies the failover rules to the
 * counters kept in the state file, changes DNS only where the set to
 * publish differs from the set last published, saves the state in one
 * transaction and exits.  This file is the command line; run.c is the run.
 */

#include <sys/prctl.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "config.h"
#include "log.h"
#include "redact.h"
#include "request.h"
#include "run.h"
#include "util.h"

#define DDUP_VERSION	"0.1.0"
#define DEFAULT_CONFIG	"/etc/ddup/ddup.ini"

#define EXIT_USAGE	2	/* bad command line or configuration */

static void
usage(FILE *f)
{
	fprintf(f, "usage: ddup-check [-c FILE] [-n] [--dry-run] [--status] "
	    "[--json] [-v] [-q] [--version] [--help]\n"
	    "       ddup-check [-c FILE] --drain TARGET [--for DURATION]\n"
	    "       ddup-check [-c FILE] --undrain TARGET\n"
	    "       ddup-check [-c FILE] --failback DOMAIN\n");
}

static void
help(void)
{
	usage(stdout);
	printf("\n"
	    "  -c, --config FILE    configuration (else $DDUP_CONFIG, else "
	    DEFAULT_CONFIG ")\n"
	    "  -n, --check-config   validate the configuration and exit\n"
	    "      --dry-run        check and show what would be published; "
	    "write nothing\n"
	    "      --status         show the state as of the last run\n"
	    "      --json           with --status or --dry-run: JSON output\n"
	    "  -v, --verbose        one line per check\n"
	    "  -q, --quiet          errors only\n"
	    "      --drain TARGET [--for DURATION]\n"
	    "                       take endpoints out of DNS from the next "
	    "run on; TARGET:\n"
	    "                       DOMAIN/ENDPOINT, either part with * and ?, "
	    "or\n"
	    "                       location=NAME; prints the endpoints\n"
	    "      --undrain TARGET\n"
	    "                       let them back at the next run\n"
	    "      --failback DOMAIN  with failback = manual: back to the "
	    "best tier at the\n"
	    "                       next run\n"
	    "      --version        print the version\n"
	    "  -h, --help           print this help\n"
	    "\nexit status: 0 done, 1 a DNS update failed, 2 bad command line "
	    "or configuration,\n3 another run holds the lock, 4 the state "
	    "file is unusable,\n5 out of memory\n");
}

/*
 * Descriptors 0, 1 and 2 closed by whoever started us would be handed
 * out by the next open(): the state file's lock on 2 would then receive
 * every log line and be destroyed.  They are opened on /dev/null before
 * anything else is opened.  -1 if that is impossible.
 */
static int
std_fds_open(void)
{
	struct stat	 sb;
	int		 fd;

	for (;;) {
		if ((fd = open("/dev/null", O_RDWR)) == -1)
			return -1;
		if (fd > STDERR_FILENO) {
			close(fd);
			break;
		}
	}
	/* The loop filled the lowest closed ones; check all three anyway. */
	for (fd = 0; fd <= STDERR_FILENO; fd++)
		if (fstat(fd, &sb) == -1)
			return -1;
	return 0;
}

/* A failed write to stdout (a full disk, a closed pipe) is an error. */
static int
stdout_done(void)
{
	if (fflush(stdout) == EOF || ferror(stdout)) {
		fprintf(stderr, "ddup-check: error: cannot write to standard "
		    "output: %s\n", strerror(errno != 0 ? errno : EIO));
		return -1;
	}
	return 0;
}

/*
 * Reads the configuration.  Its problems are printed as they are
 * (FILE:LINE: message).  Its warnings are for a person (-n, --dry-run,
 * --status, -v): a plain run from cron stays silent unless something
 * happens; they go through the log so logFormat = json stays JSON.
 */
static struct config *
load_config(const char *path, int show_warnings)
{
	struct config	*cfg;
	FILE		*msgs;
	char		*buf = NULL, *line, *next;
	size_t		 len = 0;

	msgs = open_memstream(&buf, &len);
	if (msgs == NULL)
		return config_load(path, stderr, show_warnings);
	cfg = config_load(path, msgs, show_warnings);
	fclose(msgs);
	if (cfg == NULL || !cfg->log_json)
		fputs(buf, stderr);
	else
		for (line = buf; *line != '\0'; line = next) {
			next = strchr(line, '\n');
			if (next != NULL)
				*next++ = '\0';
			else
				next = line + strlen(line);
			logx(LOG_WARN, NULL, NULL, "%s", line);
		}
	free(buf);
	return cfg;
}

/* Frees the configuration and the redactor made from it. */
static void
config_release(struct config *cfg)
{
	redact_install(NULL);
	config_free(cfg);
}

/* The command line, once read. */
struct options {
	const char	*path;		/* the configuration */
	int		 request;	/* REQ_* (request.h), 0: none */
	const char	*target;	/* with request: DOMAIN[/ENDPOINT] */
	long long	 for_ms;	/* --for, 0: none */
	int		 check_only;	/* -n */
	int		 dry_run;
	int		 status;
	int		 json;
	int		 verbose;
	int		 quiet;
};

/*
 * Reads the command line into o.  Returns -1 when the run goes on,
 * else the exit status (--version and --help done, or a usage error
 * printed).
 */
static int
parse_options(int argc, char *argv[], struct options *o)
{
	static const struct option longopts[] = {
		{ "config",	required_argument, NULL, 'c' },
		{ "check-config", no_argument,	NULL, 'n' },
		{ "dry-run",	no_argument,	NULL, 'D' },
		{ "status",	no_argument,	NULL, 'S' },
		{ "json",	no_argument,	NULL, 'J' },
		{ "verbose",	no_argument,	NULL, 'v' },
		{ "quiet",	no_argument,	NULL, 'q' },
		{ "drain",	required_argument, NULL, 'R' },
		{ "undrain",	required_argument, NULL, 'U' },
		{ "failback",	required_argument, NULL, 'F' },
		{ "for",	required_argument, NULL, 'f' },
		{ "version",	no_argument,	NULL, 'V' },
		{ "help",	no_argument,	NULL, 'h' },
		{ NULL,		0,		NULL, 0 }
	};
	const char	*for_arg = NULL;
	int		 ch, nrequests = 0;

	memset(o, 0, sizeof(*o));
	while ((ch = getopt_long(argc, argv, "c:nvqh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			o->path = optarg;
			break;
		case 'n':
			o->check_only = 1;
			break;
		case 'D':
			o->dry_run = 1;
			break;
		case 'S':
			o->status = 1;
			break;
		case 'J':
			o->json = 1;
			break;
		case 'v':
			o->verbose = 1;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'R':
		case 'U':
		case 'F':
			o->request = ch == 'R' ? REQ_DRAIN : ch == 'U' ?
			    REQ_UNDRAIN : REQ_FAILBACK;
			o->target = optarg;
			nrequests++;
			break;
		case 'f':
			for_arg = optarg;
			break;
		case 'V':
			printf("ddup-check %s\n", DDUP_VERSION);
			return stdout_done() == 0 ? 0 : RUN_FAILED;
		case 'h':
			help();
			return stdout_done() == 0 ? 0 : RUN_FAILED;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "ddup-check: unexpected argument: %s\n",
		    argv[optind]);
		usage(stderr);
		return EXIT_USAGE;
	}
	if (nrequests > 1 || (nrequests == 1 && (o->check_only ||
	    o->dry_run || o->status || o->json))) {
		fprintf(stderr, "ddup-check: --drain, --undrain and --failback "
		    "go alone (one at a time, without -n, --dry-run, --status "
		    "and --json)\n");
		usage(stderr);
		return EXIT_USAGE;
	}
	if (for_arg != NULL && (o->request != REQ_DRAIN ||
	    parse_duration(for_arg, &o->for_ms) == -1 || o->for_ms <= 0)) {
		fprintf(stderr, "ddup-check: --for %s: %s\n", for_arg,
		    o->request != REQ_DRAIN ? "goes with --drain" : "expected "
		    "a duration above zero (such as 30m, 2h or 7d)");
		usage(stderr);
		return EXIT_USAGE;
	}
	/* Capped as the configuration's durations are: now + it is safe. */
	if (for_arg != NULL && o->for_ms > DURATION_MAX_MS) {
		fprintf(stderr, "ddup-check: --for %s: at most %lldd\n", for_arg,
		    DURATION_MAX_MS / 86400000);
		return EXIT_USAGE;
	}
	if (o->check_only + o->dry_run + o->status > 1 || (o->json &&
	    !o->dry_run && !o->status) || (o->verbose && o->quiet)) {
		fprintf(stderr, "ddup-check: use at most one of -n, --dry-run "
		    "and --status; --json goes with --status or --dry-run; "
		    "-v and -q exclude each other\n");
		usage(stderr);
		return EXIT_USAGE;
	}
	if (o->path == NULL)
		o->path = getenv("DDUP_CONFIG");
	if (o->path == NULL || *o->path == '\0')
		o->path = DEFAULT_CONFIG;
	return -1;
}

/*
 * The logs, then the configuration and the redactor made from it (from
 * here on no outside text shows a secret of the file); NULL when the
 * file is wrong (printed).
 */
static struct config *
start(const struct options *o)
{
	enum log_level	 level;
	struct config	*cfg;

	level = o->quiet ? LOG_ERR : o->verbose ? LOG_DEBUG : LOG_INFO;
	log_init(0, level);
	cfg = load_config(o->path, !o->quiet && (o->check_only ||
	    o->dry_run || o->status || o->request || o->verbose));
	if (cfg == NULL)
		return NULL;
	log_init(cfg->log_json, level);
	redact_install(config_redactor(cfg));
	return cfg;
}

/* -n: the configuration was read; say so. */
static int
check_config(const struct options *o, const struct config *cfg)
{
	if (!o->quiet)
		printf("%s: configuration OK (%zu domain%s)\n", o->path,
		    cfg->ndomains, cfg->ndomains == 1 ? "" : "s");
	return stdout_done() == -1 ? RUN_FAILED : 0;
}

/* A run, --dry-run or --status: the ones that need libcurl. */
static int
run(const struct options *o, struct config *cfg)
{
	int	 rc;

	if (check_global_init() == -1) {
		logx(LOG_ERR, NULL, NULL, "cannot initialise libcurl");
		return RUN_FAILED;
	}
	if (o->status)
		rc = run_status(cfg, o->json);
	else
		rc = run_once(cfg, o->dry_run, o->json);
	check_global_cleanup();
	return rc;
}

int
main(int argc, char *argv[])
{
	struct options	 o;
	struct config	*cfg;
	int		 rc;

	if (std_fds_open() == -1)
		return RUN_STATE;	/* no /dev/null: nothing can be trusted */
	/*
	 * The configuration brings the TSIG key and API tokens into memory:
	 * no core dump may carry them (this also keeps other users' ptrace
	 * and /proc/PID/mem out).  Before the file is read, so that a
	 * crash while reading it is covered too.
	 */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1)
		fprintf(stderr, "ddup-check: warning: cannot disable core "
		    "dumps: %s\n", strerror(errno));
	if ((rc = parse_options(argc, argv, &o)) != -1)
		return rc;
	/* A health check or provider write must not kill us with SIGPIPE. */
	signal(SIGPIPE, SIG_IGN);
	if ((cfg = start(&o)) == NULL)
		return EXIT_USAGE;
	if (o.check_only)
		rc = check_config(&o, cfg);
	else if (o.request)
		rc = run_request(cfg, o.request, o.target, o.for_ms);
	else
		rc = run(&o, cfg);
	config_release(cfg);
	return rc;
}
