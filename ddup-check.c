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
#include "util.h"

#define DDUP_VERSION	"0.1.0"
#define DEFAULT_CONFIG	"/etc/ddup/ddup.ini"

#define EXIT_USAGE	2	/* bad command line or configuration */

static void
usage(FILE *f)
{
	fprintf(f, "usage: ddup-check [-c FILE] [-n] [--dry-run] [--status] "
	    "[--json] [-v] [-q] [--version] [--help]\n"
	    "       ddup-check [-c FILE] --drain DOMAIN/ENDPOINT [--for "
	    "DURATION]\n"
	    "       ddup-check [-c FILE] --undrain DOMAIN/ENDPOINT\n"
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
	    "      --drain DOMAIN/ENDPOINT [--for DURATION]\n"
	    "                       take an endpoint out of DNS from the next "
	    "run on\n"
	    "      --undrain DOMAIN/ENDPOINT\n"
	    "                       let it back at the next run\n"
	    "      --failback DOMAIN  with failback = manual: back to the "
	    "best tier at the\n"
	    "                       next run\n"
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
		{ "drain",	required_argument, NULL, 'R' },
		{ "undrain",	required_argument, NULL, 'U' },
		{ "failback",	required_argument, NULL, 'F' },
		{ "for",	required_argument, NULL, 'f' },
		{ "version",	no_argument,	NULL, 'V' },
		{ "help",	no_argument,	NULL, 'h' },
		{ NULL,		0,		NULL, 0 }
	};
	struct config	*cfg;
	const char	*path = NULL, *target = NULL, *for_arg = NULL;
	enum log_level	 level;
	long long	 for_ms = 0;
	int		 request = 0, nrequests = 0;
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
		case 'R':
		case 'U':
		case 'F':
			request = ch == 'R' ? REQ_DRAIN : ch == 'U' ?
			    REQ_UNDRAIN : REQ_FAILBACK;
			target = optarg;
			nrequests++;
			break;
		case 'f':
			for_arg = optarg;
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
	if (nrequests > 1 || (nrequests == 1 && (check_only || dry_run ||
	    status || json))) {
		fprintf(stderr, "ddup-check: --drain, --undrain and --failback "
		    "go alone (one at a time, without -n, --dry-run, --status "
		    "and --json)\n");
		usage(stderr);
		return EXIT_USAGE;
	}
	if (for_arg != NULL && (request != REQ_DRAIN ||
	    parse_duration(for_arg, &for_ms) == -1 || for_ms <= 0)) {
		fprintf(stderr, "ddup-check: --for %s: %s\n", for_arg,
		    request != REQ_DRAIN ? "goes with --drain" : "expected a "
		    "duration above zero (such as 30m, 2h or 7d)");
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
	    request || verbose));
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
	if (request) {
		rc = run_request(cfg, request, target, for_ms);
		config_free(cfg);
		return rc;
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
