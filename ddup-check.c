/*
 * ddup-check: one run of ddup.  Reads the configuration, checks every
 * endpoint once (all in parallel), applies the failover rules to the
 * counters kept in the state file, changes DNS only where the set to
 * publish differs from the set last published, saves the state in one
 * transaction and exits.  This file is the command line; run.c is the run.
 */

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "config.h"
#include "log.h"
#include "run.h"

#define DDUP_VERSION	"0.1.0"
#define DEFAULT_CONFIG	"/etc/ddup/ddup.ini"

#define EXIT_USAGE	2	/* bad command line or configuration */

static void
usage(FILE *f)
{
	fprintf(f, "usage: ddup-check [-c FILE] [-n] [--dry-run] [--status] "
	    "[--json] [-v] [-q] [--version] [--help]\n");
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
	    "      --version        print the version\n"
	    "\nexit status: 0 done, 1 a DNS update failed, 2 bad command line "
	    "or configuration,\n3 another run holds the lock, 4 the state "
	    "file is unusable\n");
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

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "config",	required_argument, NULL, 'c' },
		{ "check-config", no_argument,	NULL, 'n' },
		{ "dry-run",	no_argument,	NULL, 'D' },
		{ "status",	no_argument,	NULL, 'S' },
		{ "json",	no_argument,	NULL, 'J' },
		{ "verbose",	no_argument,	NULL, 'v' },
		{ "quiet",	no_argument,	NULL, 'q' },
		{ "version",	no_argument,	NULL, 'V' },
		{ "help",	no_argument,	NULL, 'h' },
		{ NULL,		0,		NULL, 0 }
	};
	struct config	*cfg;
	const char	*path = NULL;
	enum log_level	 level;
	int		 ch, check_only = 0, dry_run = 0, status = 0, json = 0;
	int		 verbose = 0, quiet = 0, rc;

	while ((ch = getopt_long(argc, argv, "c:nvqh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			path = optarg;
			break;
		case 'n':
			check_only = 1;
			break;
		case 'D':
			dry_run = 1;
			break;
		case 'S':
			status = 1;
			break;
		case 'J':
			json = 1;
			break;
		case 'v':
			verbose = 1;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'V':
			printf("ddup-check %s\n", DDUP_VERSION);
			return 0;
		case 'h':
			help();
			return 0;
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
	if (check_only + dry_run + status > 1 || (json && !dry_run && !status) ||
	    (verbose && quiet)) {
		fprintf(stderr, "ddup-check: use at most one of -n, --dry-run "
		    "and --status; --json goes with --status or --dry-run; "
		    "-v and -q exclude each other\n");
		usage(stderr);
		return EXIT_USAGE;
	}
	if (path == NULL)
		path = getenv("DDUP_CONFIG");
	if (path == NULL || *path == '\0')
		path = DEFAULT_CONFIG;

	/* A health check or provider write must not kill us with SIGPIPE. */
	signal(SIGPIPE, SIG_IGN);
	level = quiet ? LOG_ERR : verbose ? LOG_DEBUG : LOG_INFO;
	log_init(0, level);
	cfg = load_config(path, !quiet && (check_only || dry_run || status ||
	    verbose));
	if (cfg == NULL)
		return EXIT_USAGE;
	log_init(cfg->log_json, level);
	if (check_only) {
		if (!quiet)
			printf("%s: configuration OK (%zu domains)\n", path,
			    cfg->ndomains);
		config_free(cfg);
		return 0;
	}
	if (check_global_init() == -1) {
		logx(LOG_ERR, NULL, NULL, "cannot initialise libcurl");
		config_free(cfg);
		return RUN_FAILED;
	}
	if (status)
		rc = run_status(cfg, json);
	else
		rc = run_once(cfg, dry_run, json);
	check_global_cleanup();
	config_free(cfg);
	return rc;
}
