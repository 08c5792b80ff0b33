/*
 * config.c: good and bad configuration files, written to a temporary
 * folder, with the exact messages expected.  In the expected text "F"
 * stands for the file's path.
 */

#include <sys/stat.h>

#include <dirent.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "provider.h"
#include "util.h"

#define SECRET	"c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI="

/* Lines 1-6, 7-8 and 9-11 of most cases. */
#define PROV	"[provider dns]\n" \
		"type = rfc2136\n" \
		"server = 127.0.0.1:5353\n" \
		"zone = example.test\n" \
		"keyName = ddns-key\n" \
		"keySecret = " SECRET "\n"
#define DOM	"[domain app.example.test]\n" \
		"provider = dns\n"
#define EP	"[endpoint a]\n" \
		"url = http://127.0.0.1:8080/health\n" \
		"ip = 192.0.2.1\n"
/* Four lines. */
#define CFPROV	"[provider dns]\n" \
		"type = cloudflare\n" \
		"apiToken = " SECRET "\n" \
		"zone = example.test\n"
/* A section with nothing wrong, for the end of a file. */
#define EP2	"[endpoint b]\n" \
		"url = http://127.0.0.1:8081/health\n" \
		"ip = 192.0.2.2\n"

/* config.c's cap on the size of a configuration. */
#define CONFIG_MAX	((size_t)64 * 1024 * 1024)

static char tmpdir[] = "/tmp/ddup-test-config-XXXXXX";
static int nfiles;

static int
setup(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) == NULL ? -1 : 0;
}

static int
teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Writes len bytes of text to a new file of the given mode; malloc'd path. */
static char *
write_file(const char *text, size_t len, mode_t mode)
{
	char *path;
	int fd;

	path = xmalloc(PATH_MAX);
	snprintf(path, PATH_MAX, "%s/c%d-XXXXXX", tmpdir, nfiles++);
	fd = mkstemp(path);
	assert_true(fd != -1);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
	return path;
}

/* config_load on path; returns its messages with the path written "F". */
static char *
load_path(const char *path, int warnings, struct config **out)
{
	struct config *c;
	char *buf = NULL, *res, *p, *q;
	size_t len = 0, plen = strlen(path);
	FILE *errs;

	errs = open_memstream(&buf, &len);
	assert_non_null(errs);
	c = config_load(path, errs, warnings);
	fclose(errs);
	res = xmalloc(len + 1);
	for (p = buf, q = res; *p != '\0';) {
		if (strncmp(p, path, plen) == 0) {
			*q++ = 'F';
			p += plen;
		} else
			*q++ = *p++;
	}
	*q = '\0';
	free(buf);
	if (out != NULL)
		*out = c;
	else
		config_free(c);
	return res;
}

static char *
load(const char *text, mode_t mode, int warnings, struct config **out)
{
	char *path, *res;

	path = write_file(text, strlen(text), mode);
	res = load_path(path, warnings, out);
	free(path);
	return res;
}

static const struct {
	const char	*text;
	const char	*errs;
} bad[] = {
	/* Sections. */
	{ PROV DOM EP "[foo bar]\nx = 1\n",
	  "F:12: unknown section kind 'foo' (expected provider, domain, "
	  "endpoint or notify)\n" },
	{ PROV DOM EP "[notify]\nurl = http://127.0.0.1/\n",
	  "F:12: [notify] needs a name: [notify NAME]\n" },
	{ PROV DOM EP "[notify ops]\nmethod = POST\n",
	  "F:12: notify 'ops': missing 'url' (a webhook) or 'command' (a "
	  "program)\n" },
	{ PROV DOM EP "[notify ops]\nurl = http://127.0.0.1/\n"
	  "command = /bin/true\n",
	  "F:14: notify 'ops': give either 'url' (a webhook) or 'command' (a "
	  "program), not both\n" },
	{ PROV DOM EP "[notify ops]\ncommand = hook.sh\nheader = A: b\n"
	  "method = PUT\n",
	  "F:13: notify 'ops': command \"hook.sh\" is not an absolute path\n"
	  "F:14: notify 'ops': 'header' is for webhooks (url), not for a "
	  "command\n"
	  "F:15: notify 'ops': 'method' is for webhooks (url), not for a "
	  "command\n" },
	{ PROV DOM EP "[notify ops]\nurl = http://u:pw@127.0.0.1/\n",
	  "F:13: notify 'ops': url must not hold a user name or password "
	  "(messages show the url; put credentials in a header, or the url "
	  "in !env or !file)\n" },
	{ PROV DOM EP "[notify ops]\nurl = gopher://127.0.0.1/\n"
	  "method = GET\nevents = dns_updated, dns_moved\nattempts = 0\n"
	  "timeout = 0s\ncolour = red\n",
	  "F:13: notify 'ops': bad url 'gopher://127.0.0.1/': must start "
	  "with http:// or https://\n"
	  "F:14: notify 'ops': 'method': expected POST, PUT or PATCH, not "
	  "'GET'\n"
	  "F:15: notify 'ops': unknown event 'dns_moved' (known: "
	  "dns_updated, dns_update_failed, all_unhealthy, endpoint_down, "
	  "endpoint_up)\n"
	  "F:16: 'attempts': expected an integer from 1 to 100, not '0'\n"
	  "F:17: 'timeout': expected a duration above zero (such as 500ms, "
	  "30s, 5m, 1h or 7d), not '0s'\n"
	  "F:18: notify 'ops': unknown key 'colour' (known: url, command, "
	  "method, header, timeout, attempts, events)\n" },
	{ PROV DOM EP "[notify ops]\nurl = http://127.0.0.1/\n"
	  "header = X-Token\nheader = Bad Name: x\n"
	  "header = X-Key: !env DDUP_TEST_UNSET_VARIABLE\n"
	  "events = ,\n",
	  "F:14: notify 'ops': 'header' must be 'Name: value' with a header "
	  "name of letters, digits and !#$%&'*+-.^_`|~\n"
	  "F:15: notify 'ops': 'header' must be 'Name: value' with a header "
	  "name of letters, digits and !#$%&'*+-.^_`|~\n"
	  "F:16: 'header': environment variable DDUP_TEST_UNSET_VARIABLE is "
	  "not set\n"
	  "F:17: notify 'ops': 'events' names no event\n" },
	{ PROV DOM EP "[notify ops]\nurl = http://127.0.0.1/\n"
	  "[notify OPS]\ncommand = /bin/true\ntimeout = 1s\ntimeout = 2s\n",
	  "F:14: notify 'OPS' defined twice (first at line 12)\n"
	  "F:17: 'timeout' given twice in one section (first at line 16)\n" },
	{ PROV "[endpoint a]\nurl = http://127.0.0.1/\nip = 192.0.2.9\n" DOM EP,
	  "F:7: [endpoint] before any [domain]: an endpoint belongs to the "
	  "[domain] above it\n" },
	{ PROV DOM EP "[endpoint b\nurl = http://127.0.0.1/\n",
	  "F:12: section header without ']'\n" },
	{ PROV DOM "[endpoint a] ip = 192.0.2.1\n"
	  "url = http://127.0.0.1/\nip = 192.0.2.1\n",
	  "F:9: text after ']'\n" },
	{ PROV "[domain]\nprovider = dns\n" EP,
	  "F: no [domain] section\n"
	  "F:7: [domain] needs a name: [domain NAME]\n" },
	{ "",
	  "F: no [domain] section\n" },
	{ "interval = 30s\n" PROV,
	  "F: no [domain] section\n" },

	/* Keys. */
	{ PROV DOM "colour = blue\n" EP,
	  "F:9: unknown key 'colour' in [domain]\n" },
	{ "statusHtml = /var/www/\n" PROV DOM EP,
	  "F:1: statusHtml: expected the path of a file, not '/var/www/'\n" },
	{ "metricsFile = \n" PROV DOM EP,
	  "F:1: 'metricsFile' has no value\n" },
	{ "metricsFile = /var/lib/node-exporter/\n" PROV DOM EP,
	  "F:1: metricsFile: expected the path of a file, not "
	  "'/var/lib/node-exporter/'\n" },
	{ PROV DOM EP "cname = other.example.test\n",
	  "F:12: an endpoint has 'ip' or 'cname', not both\n" },
	{ "[provider pdns]\ntype = powerdns\nbaseUrl = http://127.0.0.1:8081\n"
	  "zone = example.test\napiKey = " SECRET "\n"
	  "[domain app.example.test]\nprovider = pdns\n"
	  "[endpoint a]\nurl = http://127.0.0.1/\ncname = lb.example.net\n",
	  "F:10: cname: provider 'pdns' (powerdns) cannot publish a CNAME\n" },
	{ PROV DOM EP "proxied = true\n",
	  "F:12: proxied: provider 'dns' (rfc2136) has no proxied records\n" },
	{ CFPROV DOM "[endpoint a]\nurl = http://127.0.0.1/\n"
	  "cname = lb.example.net\n" EP2,
	  "F:10: endpoint 'b': a cname endpoint must be alone in its "
	  "priority, and endpoint 'a' at line 7 has priority 0 too\n" },
	{ CFPROV DOM EP "proxied = true\n" EP2,
	  "F:11: endpoint 'b': proxied differs from endpoint 'a' at line 7 "
	  "of the same priority 0 (its records are published together)\n" },
	/* Each against the first before it in its tier that clashes. */
	{ CFPROV DOM EP "proxied = true\n"
	  "[endpoint c]\nurl = http://127.0.0.1/c\nip = 192.0.2.3\n"
	  "[endpoint d]\nurl = http://127.0.0.1/d\ncname = lb.example.net\n"
	  "[endpoint e]\nurl = http://127.0.0.1/e\nip = 192.0.2.5\n"
	  "priority = 1\nproxied = true\n"
	  "[endpoint f]\nurl = http://127.0.0.1/f\nip = 192.0.2.6\n"
	  "proxied = true\n",
	  "F:11: endpoint 'c': proxied differs from endpoint 'a' at line 7 "
	  "of the same priority 0 (its records are published together)\n"
	  "F:14: endpoint 'd': a cname endpoint must be alone in its "
	  "priority, and endpoint 'a' at line 7 has priority 0 too\n"
	  "F:22: endpoint 'f': proxied differs from endpoint 'c' at line 11 "
	  "of the same priority 0 (its records are published together)\n" },
	{ CFPROV DOM "[endpoint a]\nurl = http://127.0.0.1/\n"
	  "cname = not a host\n",
	  "F:9: bad cname 'not a host': not a host name\n" },
	{ CFPROV DOM "[endpoint a]\nurl = http://127.0.0.1/\n"
	  "cname = APP.example.test.\n",
	  "F:9: cname app.example.test is the domain itself\n" },
	{ CFPROV DOM "[endpoint a]\nurl = http://127.0.0.1/\n"
	  "cname = lb.example.net\n[endpoint b]\nurl = http://127.0.0.1/\n"
	  "cname = LB.example.net\npriority = 1\n",
	  "F:12: cname lb.example.net is also the cname of the endpoint at "
	  "line 7\n" },
	{ CFPROV DOM EP "proxied = maybe\n",
	  "F:10: proxied: 'maybe' is not true or false\n" },
	{ CFPROV "proxied = sometimes\n" DOM EP,
	  "F:5: provider 'dns': proxied: \"sometimes\" is not true or "
	  "false\n" },
	{ PROV DOM "interval = 10s\n" EP,
	  "F:9: 'interval' cannot be used in [domain] (it belongs at the top "
	  "of the file)\n" },
	{ "url = http://127.0.0.1/\n" PROV DOM EP,
	  "F:1: 'url' cannot be used at the top of the file (it belongs in "
	  "[endpoint])\n" },
	{ PROV DOM EP "ttl = 60\n",
	  "F:12: 'ttl' cannot be used in [endpoint] (it belongs in [domain] "
	  "or at the top of the file)\n" },
	{ PROV DOM "ttl =\n" EP,
	  "F:9: 'ttl' has no value\n" },
	{ PROV DOM "just some words\n" EP,
	  "F:9: expected 'key = value'\n" },
	{ PROV DOM "= 60\n" EP,
	  "F:9: missing key name before '='\n" },

	/* The three inih pitfalls. */
	{ PROV DOM "  ttl = 60\n" EP,
	  "F:9: indented line: inih would join it to the previous value; "
	  "remove the indentation\n" },
	{ PROV DOM "Provider = other\n" EP,
	  "F:9: 'Provider' given twice in one section (first at line 8)\n" },
	{ PROV DOM EP "name = "
	  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	  "\n" EP2,
	  "F:12: line too long (at most 199 characters)\n" },

	/* Endpoints. */
	{ PROV DOM "[endpoint a]\nip = 192.0.2.1\n",
	  "F:9: [endpoint] has no 'url' (or 'command')\n" },
	{ PROV DOM "[endpoint a]\nurl = http://127.0.0.1/\n",
	  "F:9: [endpoint] has no 'ip'\n" },
	{ PROV DOM "[endpoint a]\nurl = http://127.0.0.1/\nip = 192.0.2.300\n",
	  "F:11: bad IP address '192.0.2.300'\n" },
	{ PROV DOM "[endpoint a]\nurl = http://127.0.0.1/\nip = [2001:db8::1]\n",
	  "F:11: bad IP address '[2001:db8::1]'\n" },
	{ PROV DOM "[endpoint a]\nurl = ftp://127.0.0.1/\nip = 192.0.2.1\n",
	  "F:10: bad url 'ftp://127.0.0.1/': not a url a check takes "
	  "(http://, https://, tcp://, tls://)\n" },
	{ PROV DOM "[endpoint a]\nurl = 127.0.0.1/health\nip = 192.0.2.1\n",
	  "F:10: bad url '127.0.0.1/health': not a url a check takes "
	  "(http://, https://, tcp://, tls://)\n" },
	{ PROV DOM "[endpoint a]\nurl = http://[::1/\nip = 192.0.2.1\n",
	  "F:10: bad url 'http://[::1/': Bad IPv6 address\n" },
	{ PROV DOM "[endpoint a]\nurl = http://:80/\nip = 192.0.2.1\n",
	  "F:10: bad url 'http://:80/': No host part in the URL\n" },
	/* Shown in logs, status and JSON: refused, not quoted. */
	{ PROV DOM "[endpoint a]\nurl = http://admin:hunter2@127.0.0.1/\n"
	  "ip = 192.0.2.1\n",
	  "F:10: url must not hold a user name or password (logs and status "
	  "show the url)\n" },
	{ PROV DOM "[endpoint a]\nurl = https://:hunter2@127.0.0.1:bad/\n"
	  "ip = 192.0.2.1\n",
	  "F:10: url must not hold a user name or password (logs and status "
	  "show the url)\n" },
	{ PROV DOM "[endpoint a]\nurl = http://127.0.0.1/\xff\n"
	  "ip = 192.0.2.1\n",
	  "F:10: bad url 'http://127.0.0.1/?': a control character or "
	  "invalid UTF-8\n" },
	{ "controlUrl = https://u:hunter2@127.0.0.1/\n" PROV DOM EP,
	  "F:1: controlUrl must not hold a user name or password (messages "
	  "show the url)\n" },
	/* Names: printed as written, or refused (JSON needs UTF-8). */
	{ PROV DOM "[endpoint a\xc3]\nurl = http://127.0.0.1/\n"
	  "ip = 192.0.2.1\n",
	  "F:9: endpoint name 'a?': a control character or invalid UTF-8\n" },
	{ PROV DOM EP "name = a\x1b[31mb\n",
	  "F:12: endpoint name 'a?[31mb': a control character or invalid "
	  "UTF-8\n" },
	{ PROV DOM EP "name = \xe2\x80\xae" "evil\n",
	  "F:12: endpoint name '???evil': a control character or invalid "
	  "UTF-8\n" },
	{ "[provider d\x7fns]\ntype = rfc2136\nserver = 127.0.0.1:5353\n"
	  "zone = example.test\n"
	  "[domain app.example.test]\nprovider = d\x7fns\n" EP,
	  "F:1: provider name 'd?ns': a control character or invalid UTF-8\n" },
	{ PROV DOM EP "host = bad host!\n",
	  "F:12: host must be a host name without port\n" },
	{ PROV DOM EP "host = app.example.test:8443\n",
	  "F:12: host must be a host name without port\n" },
	{ PROV DOM EP "host = https://app.example.test\n",
	  "F:12: host must be a host name without port\n" },
	{ PROV DOM EP "host = [2001:db8::1]\n",
	  "F:12: host must be a host name without port\n" },
	{ PROV DOM EP "host = app.example.test/\n",
	  "F:12: host must be a host name without port\n" },
	{ PROV DOM EP "host = app..example.test\n",
	  "F:12: bad host name 'app..example.test'\n" },
	{ PROV DOM EP "priority = -1\n",
	  "F:12: 'priority': expected an integer from 0 to 2147483647, not "
	  "'-1'\n" },
	{ PROV DOM EP "[endpoint b]\nurl = http://127.0.0.2/\nip = 192.0.2.1\n",
	  "F:14: ip 192.0.2.1 is also the ip of the endpoint at line 9\n" },
	{ PROV DOM EP "[endpoint b]\nurl = http://127.0.0.2/\n"
	  "ip = 2001:db8::1\nname = A\n",
	  "F:15: endpoint name 'A' is also the name of the endpoint at line "
	  "9\n" },
	{ PROV DOM "[endpoint]\nurl = http://127.0.0.1/\nip = 192.0.2.1\n"
	  "[endpoint]\nurl = http://127.0.0.1/\nip = 192.0.2.2\n",
	  "F:12: endpoint name 'http://127.0.0.1/' is also the name of the "
	  "endpoint at line 9\n" },

	/* Domains. */
	{ PROV DOM,
	  "F:7: domain app.example.test has no [endpoint]\n" },
	{ PROV "[domain app.example.test]\nttl = 60\n" EP,
	  "F:7: domain app.example.test: missing 'provider'\n" },
	{ PROV "[domain app.example.test]\nprovider = dnz\n" EP,
	  "F:8: domain app.example.test: unknown provider 'dnz'\n" },
	{ PROV "[domain app.example.com]\nprovider = dns\n" EP,
	  "F:8: domain app.example.com is not in zone example.test of "
	  "provider 'dns'\n" },
	{ PROV "[domain badexample.test]\nprovider = dns\n" EP,
	  "F:8: domain badexample.test is not in zone example.test of "
	  "provider 'dns'\n" },
	{ PROV "[domain app..example.test]\nprovider = dns\n" EP,
	  "F:7: bad domain name 'app..example.test'\n" },
	{ PROV "[domain app.exa*mple.test]\nprovider = dns\n" EP,
	  "F:7: bad domain name 'app.exa*mple.test'\n" },
	{ PROV DOM EP "[domain App.Example.Test.]\nprovider = dns\n" EP2,
	  "F:12: domain app.example.test defined twice (first at line 7)\n" },
	{ PROV DOM "ttl = 0\n" EP,
	  "F:9: 'ttl': expected an integer from 1 to 2147483647, not '0'\n" },
	{ PROV DOM "ttl = 2147483648\n" EP,
	  "F:9: 'ttl': expected an integer from 1 to 2147483647, not "
	  "'2147483648'\n" },
	{ PROV DOM "attempts = 0\n" EP,
	  "F:9: 'attempts': expected an integer from 1 to 2147483647, not "
	  "'0'\n" },
	{ "recoverAfter = abc\n" PROV DOM EP,
	  "F:1: 'recoverAfter': expected an integer from 1 to 2147483647, not "
	  "'abc'\n" },
	{ PROV DOM "timeout = 3x\n" EP,
	  "F:9: 'timeout': expected a duration above zero (such as 500ms, "
	  "30s, 5m, 1h or 7d), not '3x'\n" },
	{ PROV DOM "timeout = 0s\n" EP,
	  "F:9: 'timeout': expected a duration above zero (such as 500ms, "
	  "30s, 5m, 1h or 7d), not '0s'\n" },
	{ PROV DOM "expectStatus = 99\n" EP,
	  "F:9: 'expectStatus': expected a status code (100-599), a class "
	  "such as 2xx, or a list of them, not '99'\n" },
	{ PROV DOM "method = POST\n" EP,
	  "F:9: 'method': expected GET or HEAD, not 'POST'\n" },

	/* HEAD with expectBody, at the key that made the pair. */
	{ PROV DOM "method = HEAD\nexpectBody = OK\n" EP,
	  "F:10: expectBody needs method GET (a HEAD answer has no body)\n" },
	{ PROV DOM "expectBody = OK\nmethod = head\n" EP,
	  "F:10: expectBody needs method GET (a HEAD answer has no body)\n" },
	{ "expectBody = OK\n" PROV DOM "method = HEAD\n" EP,
	  "F:10: expectBody needs method GET (a HEAD answer has no body)\n" },
	{ "method = HEAD\n" PROV DOM "expectBody = OK\n" EP,
	  "F:10: expectBody needs method GET (a HEAD answer has no body)\n" },
	/* A pair at the top is reported there, once for all domains. */
	{ "method = HEAD\nexpectBody = OK\n" PROV DOM EP
	  "[domain b.example.test]\nprovider = dns\n" EP2,
	  "F:2: expectBody needs method GET (a HEAD answer has no body)\n" },

	/* Top level. */
	{ "maxParallel = 0\n" PROV DOM EP,
	  "F:1: 'maxParallel': expected an integer from 1 to 2147483647, not "
	  "'0'\n" },
	{ "interval = soon\n" PROV DOM EP,
	  "F:1: 'interval': expected a duration above zero (such as 500ms, "
	  "30s, 5m, 1h or 7d), not 'soon'\n" },
	{ "history = -1d\n" PROV DOM EP,
	  "F:1: 'history': expected a duration above zero (such as 500ms, "
	  "30s, 5m, 1h or 7d), not '-1d'\n" },
	{ "logFormat = xml\n" PROV DOM EP,
	  "F:1: 'logFormat': expected text or json, not 'xml'\n" },
	{ "caFile = /nonexistent/ca.pem\n" PROV DOM EP,
	  "F:1: caFile /nonexistent/ca.pem: cannot read: No such file or "
	  "directory\n" },
	{ "caFile = /tmp\n" PROV DOM EP,
	  "F:1: caFile /tmp: not a regular file\n" },

	/* Providers. */
	{ PROV PROV DOM EP,
	  "F:7: provider 'dns' defined twice (first at line 1)\n" },
	{ "[provider dns]\nserver = 127.0.0.1\n" DOM EP,
	  "F:1: provider 'dns': missing 'type' (one of: rfc2136, "
	  "powerdns, exec, azure, ovh, cloudflare, desec, gandi, "
	  "hetzner, digitalocean, route53, zonefile, porkbun, bunny, "
	  "webhook)\n" },
	{ "[provider dns]\ntype = bind\nserver = 127.0.0.1\n" DOM EP,
	  "F:2: provider 'dns': unknown type 'bind' (known: rfc2136, "
	  "powerdns, exec, azure, ovh, cloudflare, desec, gandi, "
	  "hetzner, digitalocean, route53, zonefile, porkbun, bunny, "
	  "webhook)\n" },
	{ "[provider dns]\ntype = rfc2136\nserver = 127.0.0.1:5353\n"
	  "keyName = ddns-key\nkeySecret = " SECRET "\n" DOM EP,
	  "F:1: provider 'dns': missing 'zone'\n" },
	{ PROV "port = 53\n" DOM EP,
	  "F:7: provider 'dns': unknown key 'port' for type rfc2136\n" },
	{ "[provider]\ntype = rfc2136\n" DOM EP,
	  "F:1: [provider] needs a name: [provider NAME]\n"
	  "F:4: domain app.example.test: unknown provider 'dns'\n" },
	{ "[provider dns]\ntype = rfc2136\nserver = 127.0.0.1:5353\n"
	  "zone = example.test\nkeyName = ddns-key\n"
	  "keySecret = !env DDUP_TEST_SURELY_UNSET\n" DOM EP,
	  "F:6: 'keySecret': environment variable DDUP_TEST_SURELY_UNSET is "
	  "not set\n" },
	{ "[provider dns]\ntype = rfc2136\nserver = 127.0.0.1:5353\n"
	  "zone = example.test\nkeyName = ddns-key\nkeySecret = !env\n" DOM EP,
	  "F:6: 'keySecret': !env needs a variable name\n" },
	{ "[provider dns]\ntype = rfc2136\nserver = 127.0.0.1:5353\n"
	  "zone = example.test\nkeyName = ddns-key\n"
	  "keySecret = !file /nonexistent/tsig.key\n" DOM EP,
	  "F:6: 'keySecret': !file /nonexistent/tsig.key: cannot read: No "
	  "such file or directory\n" },
	{ "[provider dns]\ntype = rfc2136\nserver = 127.0.0.1:5353\n"
	  "zone = example.test\nkeyName = !env USER\n"
	  "keySecret = " SECRET "\n" DOM EP,
	  "F:5: 'keyName' is not a secret: !env and !file work only for "
	  "secrets\n" },
	{ "[provider pdns]\ntype = powerdns\nbaseUrl = http://127.0.0.1:8081\n"
	  "zone = example.test\n"
	  "[domain app.example.test]\nprovider = pdns\n" EP,
	  "F:1: provider 'pdns': missing 'apiKey'\n" },

	/* ddup.ini(5), POLICIES: locations and the other policies. */
	{ PROV DOM "location = austin\nfailoverLocations = boston, london, "
	  "boston\n" EP,
	  "F:10: 'failoverLocations': location 'boston' listed twice\n" },
	{ PROV DOM "location = austin\nfailoverLocations = boston Austin\n" EP,
	  "F:10: failoverLocations lists 'Austin', the domain's own "
	  "location\n" },
	{ "location = austin\n" PROV DOM "failoverLocations = austin\n" EP,
	  "F:10: failoverLocations lists 'austin', the domain's own "
	  "location\n" },
	/* Made at the top: said once there, not again by each domain. */
	{ "location = austin\nfailoverLocations = austin\n" PROV DOM EP
	  "[domain b.example.test]\nprovider = dns\n" EP2,
	  "F:2: failoverLocations lists 'austin', the domain's own "
	  "location\n" },
	{ PROV DOM "failoverLocations = boston\n" EP,
	  "F:9: failoverLocations needs a location (the one whose endpoints "
	  "are preferred)\n" },
	{ PROV DOM "location = san francisco\n" EP,
	  "F:9: 'location': bad location 'san francisco' (letters, digits, "
	  "'-', '_' and '.')\n" },
	{ PROV DOM "location = x\nfailoverLocations = a/b\n" EP,
	  "F:10: 'failoverLocations': bad location 'a/b' (letters, digits, "
	  "'-', '_' and '.')\n" },
	{ PROV DOM "location = x\nfailoverLocations = ,\n" EP,
	  "F:10: 'failoverLocations' has no location\n" },
	{ PROV DOM EP "location = austin!\n",
	  "F:12: bad location 'austin!' (letters, digits, '-', '_' and "
	  "'.')\n" },
	{ PROV DOM "failback = sometimes\n" EP,
	  "F:9: 'failback': expected auto or manual, not 'sometimes'\n" },
	{ PROV DOM "publish = two\n" EP,
	  "F:9: 'publish': expected all or one, not 'two'\n" },
	{ PROV DOM "minHealthy = 0\n" EP,
	  "F:9: 'minHealthy': expected an integer from 1 to 2147483647, not "
	  "'0'\n" },
	{ "controlUrl = gopher://example.test/\n" PROV DOM EP,
	  "F:1: bad controlUrl 'gopher://example.test/': must start with "
	  "http:// or https://\n" },
	{ PROV DOM "controlUrl = http://127.0.0.1/\n" EP,
	  "F:9: 'controlUrl' cannot be used in [domain] (it belongs at the "
	  "top of the file)\n" },
	{ PROV DOM EP "failback = manual\n",
	  "F:12: 'failback' cannot be used in [endpoint] (it belongs in "
	  "[domain] or at the top of the file)\n" },
	/* Bounded, so that 3 x interval and the like cannot overflow. */
	{ "interval = 106751991167d\n" PROV DOM EP,
	  "F:1: 'interval': at most 3650d, not '106751991167d'\n" },
	{ "history = 3651d\n" PROV DOM EP,
	  "F:1: 'history': at most 3650d, not '3651d'\n" },
	{ PROV DOM "timeout = 9223372036854775807ms\n" EP,
	  "F:9: 'timeout': at most 3650d, not '9223372036854775807ms'\n" },

	/* Many at once, sorted by line. */
	{ "ttl = 0\n"
	  "[provider dns]\ntype = rfc2136\nserver = 127.0.0.1:5353\n"
	  "[domain app.example.test]\nprovider = dns\n"
	  "[endpoint a]\nip = 192.0.2.1\n"
	  "[domain b.example.test]\nprovider = nope\n",
	  "F:1: 'ttl': expected an integer from 1 to 2147483647, not '0'\n"
	  "F:2: provider 'dns': missing 'zone'\n"
	  "F:7: [endpoint] has no 'url' (or 'command')\n"
	  "F:9: domain b.example.test has no [endpoint]\n"
	  "F:10: domain b.example.test: unknown provider 'nope'\n" },
};

static void
test_bad(void **state)
{
	struct config *c;
	char *errs;
	size_t i;
	int distinct = 0;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		c = (struct config *)1;
		errs = load(bad[i].text, 0600, 1, &c);
		if (c != NULL || strcmp(errs, bad[i].errs) != 0)
			fail_msg("case %zu: got %s\"%s\"\nwanted \"%s\"", i,
			    c != NULL ? "a config and " : "", errs,
			    bad[i].errs);
		free(errs);
		distinct++;
	}
	assert_true(distinct >= 25);
}

/* cname and proxied endpoints, the provider's proxied as default. */
static void
test_cname_proxied(void **state)
{
	const struct domain_cfg *d;
	struct config *c;
	char *errs;

	(void)state;
	errs = load("[provider dns]\ntype = cloudflare\napiToken = t\n"
	    "zoneId = 023e105f4ecef8ad9ca31a8372d0c353\nproxied = yes\n"
	    "[domain app.example.test]\nprovider = dns\n"
	    "[endpoint lb]\nurl = http://127.0.0.1/\ncname = LB.Example.NET.\n"
	    "proxied = false\n"
	    "[endpoint a]\nurl = http://127.0.0.1/\nip = 192.0.2.1\n"
	    "priority = 10\n", 0600, 1, &c);
	assert_string_equal(errs, "");
	free(errs);
	assert_non_null(c);
	d = &c->domains[0];
	assert_int_equal(d->neps, 2);
	assert_true(d->hascname);
	assert_true(d->has4);
	assert_false(d->has6);
	assert_string_equal(d->eps[0].cname, "lb.example.net");
	assert_int_equal(d->eps[0].ip.family, 0);
	assert_string_equal(endpoint_target(&d->eps[0]), "lb.example.net");
	assert_false(d->eps[0].proxied);
	assert_null(d->eps[1].cname);
	assert_true(d->eps[1].proxied);
	assert_string_equal(endpoint_target(&d->eps[1]), "192.0.2.1");
	config_free(c);
}

static void
test_defaults(void **state)
{
	const struct provider_cfg *pc;
	const struct domain_cfg *d;
	const struct endpoint_cfg *e;
	struct config *c;
	char *errs, buf[64];

	(void)state;
	errs = load(PROV DOM EP, 0600, 1, &c);
	assert_string_equal(errs, "");
	free(errs);
	assert_non_null(c);
	assert_int_equal(c->interval_ms, 30000);
	assert_string_equal(c->state, "/var/lib/ddup/ddup.db");
	assert_int_equal(c->max_parallel, 256);
	assert_null(c->ca_file);
	assert_int_equal(c->log_json, 0);
	assert_int_equal(c->history_ms, 7 * 86400 * 1000LL);

	assert_int_equal(c->nproviders, 1);
	pc = &c->providers[0];
	assert_string_equal(pc->name, "dns");
	assert_ptr_equal(pc->ops, &rfc2136_ops);
	assert_int_equal(pc->line, 1);
	assert_int_equal(pc->nkv, 4);
	assert_string_equal(provider_cfg_get(pc, "ZONE"), "example.test");
	assert_string_equal(provider_cfg_get(pc, "keySecret"), SECRET);
	assert_null(provider_cfg_get(pc, "protocol"));
	assert_int_equal(provider_cfg_line(pc, "zone"), 4);
	assert_int_equal(provider_cfg_line(pc, "protocol"), 1);
	assert_int_equal(provider_cfg_line(pc, NULL), 1);
	assert_string_equal(pc->kv[3].key, "keySecret");
	assert_true(pc->kv[3].secret);
	assert_false(pc->kv[0].secret);

	assert_int_equal(c->ndomains, 1);
	d = &c->domains[0];
	assert_string_equal(d->name, "app.example.test");
	assert_ptr_equal(d->provider, pc);
	assert_int_equal(d->pol.ttl, 120);
	assert_int_equal(d->pol.timeout_ms, 3000);
	assert_int_equal(d->pol.attempts, 2);
	assert_int_equal(d->pol.recover_after, 1);
	assert_int_equal(d->pol.head, 0);
	expect_format(&d->pol.expect, buf, sizeof(buf));
	assert_string_equal(buf, "2xx");
	assert_null(d->pol.expect_body);
	assert_int_equal(d->line, 7);
	assert_true(d->has4);
	assert_false(d->has6);

	assert_int_equal(d->neps, 1);
	e = &d->eps[0];
	assert_string_equal(e->name, "a");
	assert_string_equal(e->url, "http://127.0.0.1:8080/health");
	assert_null(e->host);
	assert_string_equal(e->ip.s, "192.0.2.1");
	assert_int_equal(e->priority, 0);
	assert_int_equal(e->line, 9);
	config_free(c);
}

/* Top-level check keys are every domain's defaults; spelling is free. */
static void
test_inherit_and_case(void **state)
{
	static const char text[] =
	    "; settings for the whole file\n"
	    "TTL = 60\n"
	    "TimeOut = 1500ms\n"
	    "attempts = 3 ; an inline comment\n"
	    "RECOVERAFTER = 4\n"
	    "method = head\n"
	    "expectstatus = 200, 204\n"
	    "interval = 1m\n"
	    "MaxParallel = 8\n"
	    "LOGFORMAT = JSON\n"
	    "history = 2d\n"
	    "state : /tmp/ddup-test.db\n"
	    "\n"
	    "# the DNS server\n"
	    "[Provider dns]\n"
	    "TYPE = RFC2136\n"
	    "SERVER = 127.0.0.1:5353\n"
	    "Zone = Example.Test.\n"
	    "keyname = ddns-key\n"
	    "KEYSECRET = " SECRET "\n"
	    "[DOMAIN App.Example.Test.]\n"
	    "Provider = dns\n"
	    "ttl = 300\n"
	    "Method = GET\n"
	    "EXPECTBODY = OK\n"
	    "[ENDPOINT]\n"
	    "URL = http://[2001:db8::1]:8080/health\n"
	    "IP = 2001:DB8::1\n"
	    "Priority = 10\n"
	    "[endpoint second]\n"
	    "url = https://127.0.0.1/\n"
	    "ip = 192.0.2.7\n"
	    "host = App.Example.Test\n"
	    "name = shown\n"
	    "[domain example.test]\n"
	    "provider = DNS\n"
	    "[endpoint]\n"
	    "url = http://127.0.0.1/\n"
	    "ip = 192.0.2.8\n";
	const struct domain_cfg *d;
	struct config *c;
	char *errs, buf[64];

	(void)state;
	errs = load(text, 0600, 1, &c);
	assert_string_equal(errs, "");
	free(errs);
	assert_non_null(c);
	assert_int_equal(c->interval_ms, 60000);
	assert_int_equal(c->max_parallel, 8);
	assert_int_equal(c->log_json, 1);
	assert_int_equal(c->history_ms, 2 * 86400 * 1000LL);
	assert_string_equal(c->state, "/tmp/ddup-test.db");
	assert_string_equal(c->providers[0].kv[2].key, "keyName");
	assert_string_equal(c->providers[0].kv[3].key, "keySecret");
	assert_ptr_equal(c->providers[0].ops, &rfc2136_ops);
	assert_int_equal(c->ndomains, 2);

	d = &c->domains[0];
	assert_string_equal(d->name, "app.example.test");
	assert_int_equal(d->pol.ttl, 300);
	assert_int_equal(d->pol.timeout_ms, 1500);
	assert_int_equal(d->pol.attempts, 3);
	assert_int_equal(d->pol.recover_after, 4);
	assert_int_equal(d->pol.head, 0);
	expect_format(&d->pol.expect, buf, sizeof(buf));
	assert_string_equal(buf, "200, 204");
	assert_string_equal(d->pol.expect_body, "OK");
	assert_true(d->has4);
	assert_true(d->has6);
	assert_int_equal(d->neps, 2);
	assert_string_equal(d->eps[0].name, "http://[2001:db8::1]:8080/health");
	assert_string_equal(d->eps[0].ip.s, "2001:db8::1");
	assert_int_equal(d->eps[0].ip.family, 6);
	assert_int_equal(d->eps[0].priority, 10);
	assert_string_equal(d->eps[1].name, "shown");
	assert_string_equal(d->eps[1].host, "app.example.test");

	d = &c->domains[1];
	assert_string_equal(d->name, "example.test");
	assert_ptr_equal(d->provider, &c->providers[0]);
	assert_int_equal(d->pol.ttl, 60);
	assert_int_equal(d->pol.head, 1);
	assert_int_equal(d->pol.recover_after, 4);
	assert_null(d->pol.expect_body);
	assert_true(d->has4);
	assert_false(d->has6);
	config_free(c);
}

/*
 * The keys of ddup.ini(5), POLICIES: inherited from the top, ranks in
 * the order of preference.
 */
static void
test_policies(void **state)
{
	struct config	*c;
	struct domain_cfg *d;
	char		*errs;

	(void)state;
	errs = load("location = austin\nfailoverLocations = boston london\n"
	    "publish = one\nfailback = manual\nminHealthy = 2\n"
	    "controlUrl = http://127.0.0.1:9/ping\n" PROV DOM
	    "[endpoint a1]\nurl = http://127.0.0.1:1/\nip = 192.0.2.1\n"
	    "location = Austin\n"
	    "[endpoint l1]\nurl = http://127.0.0.1:2/\nip = 192.0.2.2\n"
	    "location = london\n"
	    "[endpoint b1]\nurl = http://127.0.0.1:3/\nip = 192.0.2.3\n"
	    "location = boston\n"
	    "[endpoint x1]\nurl = http://127.0.0.1:4/\nip = 192.0.2.4\n"
	    "location = paris\n"
	    "[endpoint n1]\nurl = http://127.0.0.1:5/\nip = 192.0.2.5\n"
	    "[domain b.example.test]\nprovider = dns\nlocation = boston\n"
	    "failoverLocations = austin\npublish = all\nfailback = auto\n"
	    "[endpoint a1]\nurl = http://127.0.0.1:1/\nip = 192.0.2.1\n"
	    "location = austin\n"
	    "[endpoint b1]\nurl = http://127.0.0.1:3/\nip = 192.0.2.3\n"
	    "location = boston\n", 0600, 1, &c);
	assert_string_equal(errs, "");
	free(errs);
	assert_non_null(c);
	assert_string_equal(c->control_url, "http://127.0.0.1:9/ping");
	d = &c->domains[0];
	assert_string_equal(d->pol.location, "austin");
	assert_int_equal(d->pol.nfailover, 2);
	assert_string_equal(d->pol.failover[1], "london");
	assert_true(d->pol.publish_one && d->pol.failback_manual);
	assert_int_equal(d->pol.min_healthy, 2);
	assert_string_equal(d->eps[0].location, "Austin");
	assert_int_equal(d->eps[0].rank, 0);
	assert_int_equal(d->eps[1].rank, 2);
	assert_int_equal(d->eps[2].rank, 1);
	assert_int_equal(d->eps[3].rank, 3);
	assert_int_equal(d->eps[4].rank, 3);
	assert_null(d->eps[4].location);
	assert_string_equal(domain_rank_location(d, 1), "boston");
	assert_null(domain_rank_location(d, 3));
	d = &c->domains[1];
	assert_string_equal(d->pol.location, "boston");
	assert_int_equal(d->pol.nfailover, 1);
	assert_false(d->pol.publish_one || d->pol.failback_manual);
	assert_int_equal(d->pol.min_healthy, 2);
	assert_int_equal(d->eps[0].rank, 1);
	assert_int_equal(d->eps[1].rank, 0);
	config_free(c);

	/* Without a location every rank is 0, whatever the endpoints say. */
	errs = load(PROV DOM EP "location = mars\n", 0600, 1, &c);
	assert_string_equal(errs, "");
	free(errs);
	assert_int_equal(c->domains[0].eps[0].rank, 0);
	assert_null(domain_rank_location(&c->domains[0], 0));
	assert_int_equal(c->domains[0].pol.min_healthy, 1);
	assert_null(c->control_url);
	config_free(c);
}

static void
test_secrets(void **state)
{
	const struct provider_cfg *pc;
	struct config *c;
	char text[2048], *file, *errs, *rel;

	(void)state;
	setenv("DDUP_TEST_SECRET", "from-the-environment", 1);
	file = write_file(SECRET "\n", strlen(SECRET) + 1, 0600);
	rel = write_file("k-from-a-file\n", 14, 0600);
	snprintf(text, sizeof(text),
	    "[provider pdns]\ntype = powerdns\nbaseUrl = http://127.0.0.1:8081\n"
	    "apiKey = !env DDUP_TEST_SECRET\nzone = example.test\n"
	    "[provider dns]\ntype = rfc2136\nserver = 127.0.0.1:5353\n"
	    "zone = example.test\nkeyName = ddns-key\nkeySecret = !file %s\n"
	    "[provider rel]\ntype = powerdns\nbaseUrl = http://127.0.0.1:8081\n"
	    "apiKey = !file   %s\nzone = example.test\n"
	    "[domain app.example.test]\nprovider = pdns\n" EP,
	    file, strrchr(rel, '/') + 1);
	/* Group-readable, but no literal secret: no warning. */
	errs = load(text, 0644, 1, &c);
	assert_string_equal(errs, "");
	free(errs);
	assert_non_null(c);
	pc = &c->providers[0];
	assert_string_equal(provider_cfg_get(pc, "apiKey"), "from-the-environment");
	pc = &c->providers[1];
	/* The trailing newline goes. */
	assert_string_equal(provider_cfg_get(pc, "keySecret"), SECRET);
	/* A relative path is taken from the configuration's folder. */
	pc = &c->providers[2];
	assert_string_equal(provider_cfg_get(pc, "apiKey"), "k-from-a-file");
	config_free(c);
	free(rel);

	/* An empty variable, an empty file: errors that show no value. */
	setenv("DDUP_TEST_SECRET", "", 1);
	rel = write_file("\n", 1, 0600);
	snprintf(text, sizeof(text),
	    "[provider pdns]\ntype = powerdns\nbaseUrl = http://127.0.0.1:8081\n"
	    "apiKey = !env DDUP_TEST_SECRET\nzone = example.test\n"
	    "[provider p2]\ntype = powerdns\nbaseUrl = http://127.0.0.1:8081\n"
	    "apiKey = !file %s\nzone = example.test\n"
	    "[domain app.example.test]\nprovider = pdns\n" EP, rel);
	errs = load(text, 0600, 1, &c);
	assert_null(c);
	free(file);
	file = xmalloc(strlen(rel) + 256);
	snprintf(file, strlen(rel) + 256,
	    "F:4: 'apiKey': environment variable DDUP_TEST_SECRET is empty\n"
	    "F:9: 'apiKey': !file %s: is empty\n", rel);
	assert_string_equal(errs, file);
	free(errs);
	free(file);
	free(rel);
	unsetenv("DDUP_TEST_SECRET");
}

/* The provider's own check is reported at the line of the key at fault. */
static void
test_provider_check(void **state)
{
	struct config *c;
	char *errs;

	(void)state;
	errs = load("[provider dns]\ntype = rfc2136\nserver = 127.0.0.1:5353\n"
	    "zone = example.test\nkeyName = ddns-key\nkeySecret = %%%%\n"
	    DOM EP, 0600, 1, &c);
	assert_null(c);
	assert_true(strncmp(errs, "F:6: provider 'dns': ", 21) == 0);
	assert_null(strstr(errs, "%%%%"));
	assert_non_null(strchr(errs, '\n'));
	assert_string_equal(strchr(errs, '\n'), "\n");
	free(errs);
}

static void
test_warnings(void **state)
{
#define EXECPROV "[provider dns]\ntype = exec\ncommand = /bin/true\n" \
		"timeout = 5s\n"
	static const struct {
		const char	*top;
		const char	*prov;		/* NULL: PROV */
		const char	*want;
	} slow[] = {
		{ "interval = 30s\nmaxParallel = 1\ntimeout = 5s\n", NULL,
		  "F:2: warning: a run can take 3m20s when every check times "
		  "out (40 checks, maxParallel 1: 40 x timeout 5s), longer than "
		  "interval (30s)\n" },
		{ "interval = 30s\nmaxParallel = 8\ntimeout = 5s\n", NULL, "" },
		{ "interval = 30s\nmaxParallel = 8\ntimeout = 5s\n"
		  "controlUrl = http://127.0.0.1/\n", NULL, "" },
		{ "interval = 29s\nmaxParallel = 8\ntimeout = 5s\n"
		  "controlUrl = http://127.0.0.1/\n", NULL,
		  "F:2: warning: a run can take 30s when every check times out "
		  "(40 checks, maxParallel 8: 5 x timeout 5s + controlUrl 5s), "
		  "longer than interval (29s)\n" },
		{ "interval = 30s\nmaxParallel = 8\ntimeout = 5s\n", EXECPROV,
		  "" },
		{ "interval = 19s\nmaxParallel = 8\ntimeout = 2500ms\n"
		  "controlUrl = http://127.0.0.1/\n", EXECPROV,
		  "F:2: warning: a run can take 20s when every check times out "
		  "(40 checks, maxParallel 8: 5 x timeout 2.500s + controlUrl "
		  "2.500s + provider 5s), longer than interval (19s)\n" },
	};
	struct config *c;
	char *errs;
	size_t i;

	(void)state;
	/* A literal secret in a file that others can read. */
	errs = load(PROV DOM EP, 0644, 1, &c);
	assert_string_equal(errs, "F:6: warning: provider 'dns': secret "
	    "'keySecret' is written in a file that group or others can read; "
	    "use !env or !file, or make the file private\n");
	assert_non_null(c);
	config_free(c);
	free(errs);
	errs = load(PROV DOM EP, 0644, 0, &c);
	assert_string_equal(errs, "");
	assert_non_null(c);
	config_free(c);
	free(errs);

	/* rfc2136 without TSIG. */
	errs = load("[provider dns]\ntype = rfc2136\nserver = 127.0.0.1:5353\n"
	    "zone = example.test\n" DOM EP, 0600, 1, &c);
	assert_string_equal(errs, "F:1: warning: provider 'dns': updates will "
	    "not be signed (no TSIG key)\n");
	assert_non_null(c);
	config_free(c);
	free(errs);

	/* A timeout not below interval, written or inherited. */
	errs = load("interval = 5s\n" PROV DOM "timeout = 5s\n" EP, 0600, 1, &c);
	assert_string_equal(errs, "F:10: warning: domain app.example.test: "
	    "timeout (5000 ms) is not below interval (5000 ms)\n");
	assert_non_null(c);
	config_free(c);
	free(errs);
	errs = load("interval = 2s\n" PROV DOM EP, 0600, 1, &c);
	assert_string_equal(errs, "F:8: warning: domain app.example.test: "
	    "timeout (3000 ms) is not below interval (2000 ms)\n");
	assert_non_null(c);
	config_free(c);
	free(errs);

	/*
	 * A run that cannot fit in interval: 40 checks one at a time, 5 s
	 * each, 200 s against 30 s.  8 at a time fit (25 s); with the
	 * controlUrl's check before them, or a provider's timeout after
	 * them, they fit 30 s, not 29 s; all three, not 19 s.
	 */
	for (i = 0; i < sizeof(slow) / sizeof(slow[0]); i++) {
		char	 text[8192];
		size_t	 off, j;

		off = (size_t)snprintf(text, sizeof(text), "%s%s" DOM,
		    slow[i].top, slow[i].prov != NULL ? slow[i].prov : PROV);
		for (j = 0; j < 40; j++)
			off += (size_t)snprintf(text + off, sizeof(text) - off,
			    "[endpoint e%zu]\nurl = http://127.0.0.1/\n"
			    "ip = 192.0.2.%zu\n", j, j + 1);
		errs = load(text, 0600, 1, &c);
		if (strcmp(errs, slow[i].want) != 0)
			fail_msg("%zu: %s", i, errs);
		assert_non_null(c);
		config_free(c);
		free(errs);
		/* A warning only: a plain run says nothing. */
		errs = load(text, 0600, 0, &c);
		assert_string_equal(errs, "");
		assert_non_null(c);
		config_free(c);
		free(errs);
	}

	/* Warnings come with errors, in line order. */
	errs = load("interval = 2s\n" PROV DOM "ttl = 0\n" EP, 0644, 1, &c);
	assert_null(c);
	assert_string_equal(errs, "F:7: warning: provider 'dns': secret "
	    "'keySecret' is written in a file that group or others can read; "
	    "use !env or !file, or make the file private\n"
	    "F:8: warning: domain app.example.test: timeout (3000 ms) is not "
	    "below interval (2000 ms)\n"
	    "F:10: 'ttl': expected an integer from 1 to 2147483647, not '0'\n");
	free(errs);
}

/* What inih would get wrong, and what it must get right. */
static void
test_lines(void **state)
{
	struct config *c;
	char text[1024], url[256], *errs;
	size_t n;

	(void)state;
	/*
	 * A line of exactly 199 characters is whole: Debian's inih reads
	 * lines into 200 bytes with the NUL (this is the real library).
	 */
	n = 199 - strlen("url = ");
	snprintf(url, sizeof(url), "http://127.0.0.1/%0*d", (int)n - 17, 7);
	snprintf(text, sizeof(text), PROV DOM "[endpoint a]\nurl = %s\n"
	    "ip = 192.0.2.1\n", url);
	assert_int_equal(strlen(strstr(text, "url =")) - strlen(strchr(
	    strstr(text, "url ="), '\n')), 199);
	errs = load(text, 0600, 1, &c);
	assert_string_equal(errs, "");
	assert_non_null(c);
	assert_string_equal(c->domains[0].eps[0].url, url);
	config_free(c);
	free(errs);

	/* CRLF, a byte order mark, comments, blank lines, spaces. */
	errs = load("\xEF\xBB\xBFinterval = 20s\r\n"
	    "[provider dns]\r\ntype=rfc2136\r\nserver = 127.0.0.1:5353\r\n"
	    "zone =example.test \r\nkeyName = ddns-key\r\n"
	    "keySecret = " SECRET "\r\n"
	    "\r\n   \r\n  ; an indented comment is fine\r\n# so is this\r\n"
	    "[domain app.example.test] ; a comment\r\nprovider = dns\r\n"
	    "expectBody = a;b\r\n"
	    "[endpoint a]\r\nurl = http://127.0.0.1/\r\nip = 192.0.2.1\r\n",
	    0600, 1, &c);
	assert_string_equal(errs, "");
	assert_non_null(c);
	assert_int_equal(c->interval_ms, 20000);
	assert_string_equal(provider_cfg_get(&c->providers[0], "zone"),
	    "example.test");
	/* inih takes ';' as a comment only after white space. */
	assert_string_equal(c->domains[0].pol.expect_body, "a;b");
	config_free(c);
	free(errs);

	/* A domain name longer than inih's 49-character section buffer. */
	errs = load(PROV "[domain a-rather-long-label-for-a-name.another-"
	    "long-label-here.example.test]\nprovider = dns\n" EP, 0600, 1, &c);
	assert_string_equal(errs, "");
	assert_non_null(c);
	assert_string_equal(c->domains[0].name, "a-rather-long-label-for-a-"
	    "name.another-long-label-here.example.test");
	config_free(c);
	free(errs);

	/* The zone itself is a domain of the zone; a trailing dot goes. */
	errs = load(PROV "[domain Example.Test.]\nprovider = dns\n" EP, 0600,
	    1, &c);
	assert_string_equal(errs, "");
	assert_non_null(c);
	assert_string_equal(c->domains[0].name, "example.test");
	config_free(c);
	free(errs);
}

/* config_parse on a copy of len bytes of text, in a buffer of that size. */
static char *
parse(const char *name, const char *text, size_t len, int warnings,
    struct config **out)
{
	struct config *c;
	char *copy, *buf = NULL;
	size_t blen = 0;
	FILE *errs;

	/* No terminating NUL: the sanitizer build catches reads past len. */
	copy = len > 0 ? xmalloc(len) : NULL;
	if (len > 0)
		memcpy(copy, text, len);
	errs = open_memstream(&buf, &blen);
	assert_non_null(errs);
	c = config_parse(name, copy, len, errs, warnings);
	fclose(errs);
	free(copy);
	if (out != NULL)
		*out = c;
	else
		config_free(c);
	return buf;
}

/* [notify] sections: defaults, both kinds, secrets in header values. */
static void
test_notify(void **state)
{
	struct config *c;
	char *errs, *secret, text[2048];
	const struct notify_cfg *n;

	(void)state;
	secret = write_file("Bearer from-a-file\n", 19, 0600);
	assert_int_equal(setenv("DDUP_TEST_HOOK_KEY", "k3y", 1), 0);
	snprintf(text, sizeof(text), PROV DOM EP
	    "[notify ops]\nurl = https://hooks.example.net/ddup\n"
	    "[notify chat]\nURL = http://127.0.0.1:9/x\nmethod = put\n"
	    "header = Authorization: !file %s\n"
	    "header = X-Key: !env DDUP_TEST_HOOK_KEY\n"
	    "Header = X-Plain:   plain value\n"
	    "timeout = 2500ms\nattempts = 1\n"
	    "events = endpoint_up endpoint_down,all_unhealthy\n"
	    "[notify prog]\ncommand = /usr/local/bin/ddup-hook\n"
	    "timeout = 3s\nevents = DNS_UPDATED\n", secret);
	/* A header value is not warned about, even literal: most are not secret. */
	errs = load(text, 0644, 1, &c);
	assert_string_equal(errs, "F:6: warning: provider 'dns': secret "
	    "'keySecret' is written in a file that group or others can read; "
	    "use !env or !file, or make the file private\n");
	assert_non_null(c);
	assert_int_equal(c->nnotifiers, 3);
	n = &c->notifiers[0];
	assert_string_equal(n->name, "ops");
	assert_string_equal(n->url, "https://hooks.example.net/ddup");
	assert_null(n->command);
	assert_string_equal(n->method, "POST");
	assert_int_equal(n->nheaders, 0);
	assert_int_equal(n->timeout_ms, 10000);
	assert_int_equal(n->attempts, 5);
	assert_int_equal(n->events, (1u << EVT_DNS_UPDATED) |
	    (1u << EVT_DNS_UPDATE_FAILED) | (1u << EVT_ALL_UNHEALTHY));
	n = &c->notifiers[1];
	assert_string_equal(n->method, "PUT");
	assert_int_equal(n->nheaders, 3);
	assert_string_equal(n->headers[0], "Authorization: Bearer from-a-file");
	assert_string_equal(n->headers[1], "X-Key: k3y");
	assert_string_equal(n->headers[2], "X-Plain: plain value");
	assert_null(n->headers[3]);
	assert_int_equal(n->timeout_ms, 2500);
	assert_int_equal(n->attempts, 1);
	assert_int_equal(n->events, (1u << EVT_ENDPOINT_UP) |
	    (1u << EVT_ENDPOINT_DOWN) | (1u << EVT_ALL_UNHEALTHY));
	n = &c->notifiers[2];
	assert_null(n->url);
	assert_string_equal(n->command, "/usr/local/bin/ddup-hook");
	assert_string_equal(n->dir, tmpdir);
	assert_int_equal(n->timeout_ms, 3000);
	assert_int_equal(n->events, 1u << EVT_DNS_UPDATED);
	assert_string_equal(event_type_str(EVT_ENDPOINT_UP), "endpoint_up");
	assert_null(event_type_str(EVT_COUNT));
	config_free(c);
	free(errs);
	free(secret);
	unsetenv("DDUP_TEST_HOOK_KEY");

	/* A url from !env is a secret: kept, flagged, never quoted. */
	assert_int_equal(setenv("DDUP_TEST_HOOK_URL",
	    "https://hooks.example.net/services/T0K3N", 1), 0);
	errs = load(PROV DOM EP "[notify chat]\nurl = !env DDUP_TEST_HOOK_URL\n",
	    0600, 1, &c);
	assert_string_equal(errs, "");
	assert_non_null(c);
	assert_string_equal(c->notifiers[0].url,
	    "https://hooks.example.net/services/T0K3N");
	assert_true(c->notifiers[0].url_secret);
	config_free(c);
	free(errs);
	assert_int_equal(setenv("DDUP_TEST_HOOK_URL", "ftp://u:T0K3N@x/", 1), 0);
	errs = load(PROV DOM EP "[notify chat]\nurl = !env DDUP_TEST_HOOK_URL\n",
	    0600, 1, &c);
	assert_null(c);
	assert_string_equal(errs, "F:13: notify 'chat': the url in !env "
	    "DDUP_TEST_HOOK_URL is not a usable url: must start with http:// "
	    "or https://\n");
	free(errs);
	unsetenv("DDUP_TEST_HOOK_URL");

	/* A line break in a secret would start a header of its own. */
	secret = write_file("a\r\nX-Evil: 1\n", 13, 0600);
	snprintf(text, sizeof(text), PROV DOM EP "[notify ops]\n"
	    "url = http://127.0.0.1/\nheader = X-Key: !file %s\n", secret);
	errs = load(text, 0600, 1, &c);
	assert_null(c);
	assert_string_equal(errs, "F:14: notify 'ops': header X-Key: its "
	    "value holds a control character\n");
	free(errs);
	free(secret);
}

static void
test_parse(void **state)
{
	static const char nul[] = PROV DOM "ur\0l = x\n" EP;
	static const char text[] = PROV DOM EP;
	struct config *c;
	char *errs, *name, *rel, *big, buf[1024];

	(void)state;
	/* No file mode: a literal secret earns no warning. */
	errs = parse("mem.ini", text, strlen(text), 1, &c);
	assert_string_equal(errs, "");
	assert_non_null(c);
	assert_string_equal(c->path, "mem.ini");
	assert_string_equal(c->domains[0].eps[0].ip.s, "192.0.2.1");
	config_free(c);
	free(errs);

	/* The last line needs no newline. */
	errs = parse("mem.ini", text, strlen(text) - 1, 1, &c);
	assert_string_equal(errs, "");
	assert_non_null(c);
	assert_string_equal(c->domains[0].eps[0].ip.s, "192.0.2.1");
	config_free(c);
	free(errs);

	/* Only len bytes count, whatever follows them. */
	errs = parse("mem.ini", text, strlen(text) - 4, 1, &c);
	assert_null(c);
	assert_string_equal(errs, "mem.ini:11: bad IP address '192.0.'\n");
	free(errs);

	errs = parse("mem.ini", nul, sizeof(nul) - 1, 1, &c);
	assert_null(c);
	assert_string_equal(errs, "mem.ini:9: NUL byte in line\n");
	free(errs);

	errs = parse("mem.ini", NULL, 0, 1, &c);
	assert_null(c);
	assert_string_equal(errs, "mem.ini: no [domain] section\n");
	free(errs);

	/* As for a file, at most 64 MiB. */
	big = xcalloc(1, CONFIG_MAX + 1);
	errs = parse("mem.ini", big, CONFIG_MAX + 1, 1, &c);
	assert_null(c);
	assert_string_equal(errs, "mem.ini: file too large (more than "
	    "64 MiB)\n");
	free(errs);
	free(big);

	/* The new checks, through the same door. */
	errs = parse("mem.ini", PROV DOM "method = HEAD\nexpectBody = x\n" EP
	    "host = 127.0.0.1:80\n", strlen(PROV DOM "method = HEAD\n"
	    "expectBody = x\n" EP "host = 127.0.0.1:80\n"), 1, &c);
	assert_null(c);
	assert_string_equal(errs, "mem.ini:10: expectBody needs method GET (a "
	    "HEAD answer has no body)\nmem.ini:14: host must be a host name "
	    "without port\n");
	free(errs);

	/* A relative !file is taken from the folder of name. */
	rel = write_file("k-from-a-file\n", 14, 0600);
	name = xmalloc(strlen(tmpdir) + 16);
	sprintf(name, "%s/virtual.ini", tmpdir);
	snprintf(buf, sizeof(buf), "[provider p]\ntype = powerdns\n"
	    "baseUrl = http://127.0.0.1:8081\napiKey = !file %s\n"
	    "zone = example.test\n[domain app.example.test]\nprovider = p\n"
	    EP, strrchr(rel, '/') + 1);
	errs = parse(name, buf, strlen(buf), 1, &c);
	assert_string_equal(errs, "");
	assert_non_null(c);
	assert_string_equal(provider_cfg_get(&c->providers[0], "apiKey"),
	    "k-from-a-file");
	config_free(c);
	free(errs);
	free(name);
	free(rel);
}

/*
 * Random mixes of the file's own words, for the sanitizer build: no
 * crash, no leak, and a configuration or an error.  No !file: the texts
 * must not reach for random paths.
 */
/*
 * A key given twice is found among a section's first keys one by one,
 * and past them through a hash set: both ways report the same, at any
 * count.  Also many sections and keys, more than the arrays start with.
 */
static void
test_twice(void **state)
{
	static const size_t counts[] = { 1, 7, 8, 9, 30 };
	struct config *c;
	char *text, *errs, want[256];
	size_t i, k, n, off, cap = 65536;

	(void)state;
	text = xmalloc(cap);
	for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		n = counts[i];
		off = 0;
		off += (size_t)snprintf(text + off, cap - off, PROV DOM
		    "[endpoint a]\n");
		for (k = 0; k < n; k++)
			off += (size_t)snprintf(text + off, cap - off,
			    "%s = http://127.0.0.1:%zu/\n", k == 0 ? "url" :
			    "ip", k);
		/* Lines 9 and 10 hold url and the first ip (if any). */
		off += (size_t)snprintf(text + off, cap - off, "URL = x\n");
		if (n > 1)
			off += (size_t)snprintf(text + off, cap - off,
			    "Ip = y\n");
		errs = parse("mem.ini", text, off, 1, &c);
		assert_null(c);
		snprintf(want, sizeof(want), "mem.ini:%zu: 'URL' given twice "
		    "in one section (first at line 10)\n", 10 + n);
		if (strstr(errs, want) == NULL)
			fail_msg("%zu keys: %s", n, errs);
		if (n > 1) {
			snprintf(want, sizeof(want), "mem.ini:%zu: 'Ip' given "
			    "twice in one section (first at line 11)\n",
			    11 + n);
			if (strstr(errs, want) == NULL)
				fail_msg("%zu keys: %s", n, errs);
		}
		free(errs);
	}

	/* 2,000 endpoints: more sections and keys than the arrays start with. */
	off = (size_t)snprintf(text, cap, PROV DOM);
	for (k = 0; k < 2000; k++) {
		if (off + 128 > cap) {
			cap *= 2;
			text = xrealloc(text, cap);
		}
		off += (size_t)snprintf(text + off, cap - off,
		    "[endpoint e%zu]\nurl = http://127.0.0.1:%zu/\n"
		    "ip = 10.0.%zu.%zu\n\n", k, 1000 + k, k / 250, k % 250);
	}
	errs = parse("mem.ini", text, off, 1, &c);
	assert_string_equal(errs, "");
	assert_non_null(c);
	assert_int_equal(c->domains[0].neps, 2000);
	assert_string_equal(c->domains[0].eps[1999].name, "e1999");
	assert_string_equal(c->domains[0].eps[1999].url,
	    "http://127.0.0.1:2999/");
	assert_string_equal(c->domains[0].eps[1999].ip.s, "10.0.7.249");
	config_free(c);
	free(errs);
	free(text);
}

static void
test_parse_mixes(void **state)
{
	static const char *const words[] = { "\n", "\n", "\n", "[", "]",
	    "[domain ", "[endpoint", "[provider ", "a.example.test", "=",
	    " = ", ";", "#", " ", "\t", "\r", "\0", "\xEF\xBB\xBF", "\xff",
	    "type = rfc2136", "type = powerdns", "server = 127.0.0.1",
	    "zone = example.test", "provider = p", "url = http://127.0.0.1/",
	    "url = http://[::1]:8080/x", "ip = 192.0.2.", "ip = ::", "1",
	    "host = ", "host = a:1", "method = HEAD", "method = GET",
	    "expectBody = x", "ttl = ", "timeout = 1s", "interval = 1s",
	    "expectStatus = 2xx, ", "name = ", "priority = 5",
	    "keySecret = !env DDUP_TEST_SURELY_UNSET", "apiKey = k",
	    "baseUrl = http://127.0.0.1:8081", "notify", "!env" };
	unsigned int seed = 4711;
	struct config *c;
	char text[2048], *errs;
	size_t i, n, w, len;
	int nerrs = 0;

	(void)state;
	for (i = 0; i < 3000; i++) {
		for (len = 0, n = 0; n < 80; n++) {
			seed = seed * 1103515245 + 12345;
			w = (seed >> 16) % (sizeof(words) / sizeof(words[0]));
			/* "\0" is one byte, every other word its strlen. */
			if (words[w][0] == '\0') {
				text[len++] = '\0';
				continue;
			}
			if (len + strlen(words[w]) > sizeof(text))
				break;
			memcpy(text + len, words[w], strlen(words[w]));
			len += strlen(words[w]);
		}
		errs = parse("mix.ini", text, len, 1, &c);
		if (c != NULL)
			assert_true(c->ndomains > 0);
		else {
			assert_true(strlen(errs) > 0);
			nerrs++;
		}
		config_free(c);
		free(errs);
	}
	assert_true(nerrs > 0);
}

/* The sample files: config_load and config_parse agree on each. */
static void
test_samples(void **state)
{
	char dir[PATH_MAX], path[PATH_MAX], *via_load, *via_parse, *text;
	struct config *cl, *cp;
	struct dirent *de;
	size_t len, nfound = 0;
	FILE *fp;
	DIR *d;

	(void)state;
	/* Next to this file; make runs the tests from the top folder. */
	snprintf(dir, sizeof(dir), "%s", __FILE__);
	*strrchr(dir, '/') = '\0';
	strncat(dir, "/configs", sizeof(dir) - strlen(dir) - 1);
	d = opendir(dir);
	assert_non_null(d);
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (len < 4 || strcmp(de->d_name + len - 4, ".ini") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		text = xmalloc(1024 * 1024);
		fp = fopen(path, "r");
		assert_non_null(fp);
		len = fread(text, 1, 1024 * 1024, fp);
		fclose(fp);

		/* Without warnings: only a file has a mode to warn about. */
		via_load = load_path(path, 0, &cl);
		/* load_path writes the path as "F". */
		via_parse = parse("F", text, len, 0, &cp);
		if (strcmp(via_load, via_parse) != 0)
			fail_msg("%s: config_load said \"%s\", config_parse "
			    "\"%s\"", de->d_name, via_load, via_parse);
		assert_int_equal(cl != NULL, cp != NULL);
		if (strncmp(de->d_name, "good-", 5) == 0) {
			assert_string_equal(via_load, "");
			assert_non_null(cl);
			assert_int_equal(cl->ndomains, cp->ndomains);
			assert_int_equal(cl->nproviders, cp->nproviders);
		} else {
			assert_null(cl);
			assert_true(strlen(via_load) > 0);
		}
		config_free(cl);
		config_free(cp);
		free(via_load);
		free(via_parse);
		free(text);
		nfound++;
	}
	closedir(d);
	assert_true(nfound >= 4);
}

static void
test_files(void **state)
{
	static const char junk[] = PROV DOM "ur\0l = x\n" EP;
	unsigned int seed = 12345;
	char *path, *errs, *buf;
	struct config *c;
	size_t i, n;

	(void)state;
	errs = load_path("/nonexistent/ddup.ini", 1, &c);
	assert_null(c);
	assert_string_equal(errs, "F: cannot read: No such file or directory\n");
	free(errs);
	errs = load_path(tmpdir, 1, &c);
	assert_null(c);
	assert_string_equal(errs, "F: cannot read: Is a directory\n");
	free(errs);
	if (geteuid() != 0) {
		path = write_file(PROV DOM EP, strlen(PROV DOM EP), 0);
		errs = load_path(path, 1, &c);
		assert_null(c);
		assert_string_equal(errs, "F: cannot read: Permission denied\n");
		free(errs);
		free(path);
	}

	path = write_file(junk, sizeof(junk) - 1, 0600);
	errs = load_path(path, 1, &c);
	assert_null(c);
	assert_string_equal(errs, "F:9: NUL byte in line\n");
	free(errs);
	free(path);

	/*
	 * At most 64 MiB: a good file padded with comments to that size is
	 * read (100,000 endpoints take about 8 MiB); a byte more is not.
	 */
	n = CONFIG_MAX;
	buf = xmalloc(n + 1);
	memcpy(buf, PROV DOM EP, strlen(PROV DOM EP));
	for (i = strlen(PROV DOM EP); i < n; i++)
		buf[i] = i % 128 == 127 || i == n - 1 ? '\n' : ';';
	path = write_file(buf, n, 0600);
	errs = load_path(path, 1, &c);
	assert_string_equal(errs, "");
	assert_non_null(c);
	config_free(c);
	free(errs);
	free(path);
	buf[n] = '\n';
	path = write_file(buf, n + 1, 0600);
	errs = load_path(path, 1, &c);
	assert_null(c);
	assert_string_equal(errs, "F: file too large (more than 64 MiB)\n");
	free(errs);
	free(path);
	free(buf);

	/* Binary junk: errors, no crash (the sanitizer build checks more). */
	n = 64 * 1024;
	buf = xmalloc(n);
	for (i = 0; i < n; i++) {
		seed = seed * 1103515245 + 12345;
		buf[i] = (char)(seed >> 16);
	}
	path = write_file(buf, n, 0600);
	errs = load_path(path, 1, &c);
	assert_null(c);
	assert_true(strlen(errs) > 0);
	free(errs);
	free(path);
	/* The same with many newlines and brackets mixed in. */
	for (i = 0; i < n; i += 7)
		buf[i] = "\n[]=; \t"[(i / 7) % 7];
	path = write_file(buf, n, 0600);
	errs = load_path(path, 1, &c);
	assert_null(c);
	free(errs);
	free(path);
	free(buf);
}

/*
 * The fleet of ddup.ini(5), SEVERAL CHECKERS: checkers, checker and
 * quorum, good and bad.
 */
static const struct {
	const char	*top;		/* lines 1.. before PROV DOM EP */
	const char	*errs;		/* "" : loads */
	long		 quorum;
	const char	*checker;	/* NULL: none */
} fleet[] = {
	{ "", "", 1, NULL },
	{ "checkers = a, b,c\nchecker = B\n", "", 2, "b" },
	{ "checkers =a ,\tb,c , d,\nchecker = d\n", "", 3, "d" },
	{ "checkers = a,b,c\nchecker = a\nquorum = 3\n", "", 3, "a" },
	{ "checkers = a,b,c\nchecker = a\nquorum = Majority\n", "", 2, "a" },
	{ "checkers = solo\nchecker = solo\n", "", 1, "solo" },
	/* SQLite: validated, not needed. */
	{ "quorum = 2\n", "", 2, NULL },
	{ "checker = here\n", "", 1, "here" },
	{ "state = postgresql://ddup@127.0.0.1/ddup\n"
	  "checkers = a,b,c\nchecker = c\n", "", 2, "c" },
	{ "state = postgresql://ddup@127.0.0.1/ddup\nchecker = c\n",
	  "F:1: a PostgreSQL state needs 'checkers': the names of every "
	  "checker of this configuration, comma-separated\n", 0, NULL },
	{ "checkers = a,b,a\nchecker = a\n",
	  "F:1: 'checkers': 'a' listed twice\n", 0, NULL },
	{ "checkers = a,B,b\nchecker = a\n",
	  "F:1: 'checkers': 'b' listed twice\n", 0, NULL },
	{ "checkers = a,b/c\nchecker = a\n",
	  "F:1: 'checkers': bad checker name 'b/c' (letters, digits, '-', "
	  "'_' and '.', at most 253)\n", 0, NULL },
	/*
	 * Comma-separated (ddup.ini(5), SEVERAL CHECKERS): a blank is not a
	 * separator.
	 */
	{ "checkers = a b c d\nchecker = d\n",
	  "F:1: 'checkers': bad checker name 'a b c d' (the names are "
	  "separated by commas, not blanks)\n", 0, NULL },
	{ "checkers = alpha-1, two words\nchecker = alpha-1\n",
	  "F:1: 'checkers': bad checker name 'two words' (the names are "
	  "separated by commas, not blanks)\n", 0, NULL },
	{ "checkers = a,\tb\tc\nchecker = a\n",
	  "F:1: 'checkers': bad checker name 'b?c' (the names are "
	  "separated by commas, not blanks)\n", 0, NULL },
	{ "checkers = a, b\nchecker = a b\n",
	  "F:2: 'checker': bad checker name 'a b' (letters, digits, '-', '_' "
	  "and '.', at most 253)\n", 0, NULL },
	{ "checkers = a,b;c\nchecker = a\n",
	  "F:1: 'checkers': bad checker name 'b;c' (letters, digits, '-', "
	  "'_' and '.', at most 253)\n", 0, NULL },
	{ "checkers = ,\nchecker = a\n",
	  "F:1: 'checkers' names no checker\n", 0, NULL },
	{ "checkers =\n", "F:1: 'checkers' has no value\n", 0, NULL },
	{ "checkers = a,b\nchecker = c\n",
	  "F:2: 'checker': 'c' is not one of 'checkers' (line 1)\n", 0, NULL },
	{ "checkers = a,b\nchecker = c:d\n",
	  "F:2: 'checker': bad checker name 'c:d' (letters, digits, '-', '_' "
	  "and '.', at most 253)\n", 0, NULL },
	{ "checkers = a,b,c\nchecker = a\nquorum = 4\n",
	  "F:3: 'quorum': expected majority or a number from 1 to 3 (the "
	  "number of checkers), not '4'\n", 0, NULL },
	{ "checkers = a,b,c\nchecker = a\nquorum = 0\n",
	  "F:3: 'quorum': expected majority or a number from 1 to 3 (the "
	  "number of checkers), not '0'\n", 0, NULL },
	{ "quorum = most\n",
	  "F:1: 'quorum': expected majority or a number from 1, not 'most'\n",
	  0, NULL },
	{ PROV DOM "quorum = 2\n" EP,
	  "F:9: 'quorum' cannot be used in [domain] (it belongs at the top of "
	  "the file)\n", 0, NULL },
	/* Warned: a minority can fail what the others see pass. */
	{ "checkers = a,b,c,d\nchecker = a\nquorum = 2\n",
	  "F:3: warning: 'quorum' 2 of 4 checkers is not a majority: checkers "
	  "that cannot reach the servers can fail endpoints that the others "
	  "see pass (failures win)\n", 2, "a" },
};

static void
test_fleet(void **state)
{
	struct config *c;
	char text[2048], *errs, host[300];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(fleet) / sizeof(fleet[0]); i++) {
		snprintf(text, sizeof(text), "%s%s", fleet[i].top,
		    strstr(fleet[i].top, "[domain") != NULL ? "" :
		    PROV DOM EP);
		errs = load(text, 0600, 1, &c);
		if (strcmp(errs, fleet[i].errs) != 0 ||
		    (c == NULL) != (fleet[i].quorum == 0))
			fail_msg("case %zu: got %s\"%s\"\nwanted \"%s\"", i,
			    c != NULL ? "a config and " : "", errs,
			    fleet[i].errs);
		if (c != NULL) {
			assert_int_equal(c->quorum, fleet[i].quorum);
			if (fleet[i].checker == NULL)
				assert_null(c->checker);
			else
				assert_string_equal(c->checker,
				    fleet[i].checker);
		}
		config_free(c);
		free(errs);
	}

	/* checker defaults to the host name, which must then be listed. */
	assert_int_equal(gethostname(host, sizeof(host)), 0);
	snprintf(text, sizeof(text), "checkers = x1, %s\n" PROV DOM EP, host);
	errs = load(text, 0600, 1, &c);
	assert_string_equal(errs, "");
	assert_non_null(c);
	assert_string_equal(c->checker, host);
	assert_int_equal(c->ncheckers, 2);
	config_free(c);
	free(errs);
	snprintf(text, sizeof(text), "checkers = x1, x2\n" PROV DOM EP);
	errs = load(text, 0600, 1, &c);
	assert_null(c);
	snprintf(text, sizeof(text), "F:1: this host's name '%s' (the default "
	    "of 'checker') is not one of 'checkers': add it, or set "
	    "'checker'\n", host);
	assert_string_equal(errs, text);
	free(errs);
}

/*
 * text loads without a message (warnings too, if asked for), its state
 * want, on PostgreSQL or not.
 */
static void
assert_state_loads(const char *text, mode_t mode, int warnings, int pg,
    const char *want)
{
	struct config *c;
	char *errs;

	errs = load(text, mode, warnings, &c);
	assert_string_equal(errs, "");
	assert_non_null(c);
	assert_int_equal(c->state_pg, pg);
	assert_string_equal(c->state, want);
	config_free(c);
	free(errs);
}

/* A PostgreSQL state is a secret: !env works, a literal password warns. */
static void
test_state_uri(void **state)
{
	struct config *c;
	char *errs;

	(void)state;
	setenv("DDUP_TEST_STATE", "postgres://ddup:s3cret@db.test/ddup", 1);
	assert_state_loads("state = !env DDUP_TEST_STATE\ncheckers = a,b\n"
	    "checker = a\n" PROV DOM EP, 0644, 0, 1,
	    "postgres://ddup:s3cret@db.test/ddup");
	unsetenv("DDUP_TEST_STATE");

	/* Literal, with a password, in a file others can read. */
	errs = load("state = postgresql://ddup@db.test/ddup?password=s3cret\n"
	    "checkers = a\nchecker = a\n"
	    "[provider dns]\ntype = rfc2136\nserver = 127.0.0.1:5353\n"
	    "zone = example.test\nkeyName = ddns-key\n"
	    "keySecret = !env DDUP_NOT_SET_EVER\n" DOM EP, 0644, 1, &c);
	assert_null(c);
	assert_string_equal(errs, "F:1: warning: 'state': the URI's password "
	    "is written in a file that group or others can read; use !env or "
	    "!file, or make the file private\n"
	    "F:9: 'keySecret': environment variable DDUP_NOT_SET_EVER is not "
	    "set\n");
	assert_null(strstr(errs, "s3cret"));
	free(errs);
	/* No password in it (a .pgpass, or peer authentication): no warning. */
	errs = load("state = postgresql:///ddup?host=/run/postgresql\n"
	    "checkers = a\nchecker = a\n" PROV DOM EP, 0600, 1, &c);
	assert_string_equal(errs, "");
	assert_non_null(c);
	assert_true(c->state_pg);
	config_free(c);
	free(errs);
	/* One libpq cannot read: what its message quotes is left out. */
	errs = load("state = postgresql://ddup:s3cret@db.test/ddup?colour=1\n"
	    "checkers = a\nchecker = a\n" PROV DOM EP, 0600, 1, &c);
	assert_null(c);
	assert_string_equal(errs, "F:1: 'state': not a PostgreSQL URI that "
	    "libpq can read: invalid URI query parameter: \"...\"\n");
	free(errs);
	errs = load("state = postgresql://ddup:s3%zzcret@[::1/ddup\n"
	    "checkers = a\nchecker = a\n" PROV DOM EP, 0600, 1, &c);
	assert_null(c);
	assert_non_null(strstr(errs, "F:1: 'state': not a PostgreSQL URI"));
	assert_null(strstr(errs, "s3"));
	assert_null(strstr(errs, "cret"));
	free(errs);
	/* A keyword/value connection string: refused, never quoted. */
	errs = load("state = host=127.0.0.1 password=s3cret dbname=ddup\n"
	    PROV DOM EP, 0600, 1, &c);
	assert_null(c);
	assert_string_equal(errs, "F:1: 'state': looks like a libpq "
	    "keyword/value connection string; write a postgresql:// URI\n");
	free(errs);
	setenv("DDUP_TEST_STATE", "dbname=ddup user=ddup password=s3cret", 1);
	errs = load("quorum = 1\nstate = !env DDUP_TEST_STATE\n" PROV DOM EP,
	    0600, 1, &c);
	assert_null(c);
	assert_string_equal(errs, "F:2: 'state': looks like a libpq "
	    "keyword/value connection string; write a postgresql:// URI\n");
	free(errs);
	unsetenv("DDUP_TEST_STATE");
	/* A relative path is a path (ddup.ini(5), TOP-LEVEL KEYS), a '=' in it too. */
	assert_state_loads("state = state/colour=1.db\n" PROV DOM EP, 0600, 1,
	    0, "state/colour=1.db");
	/* A path is SQLite, also from !env. */
	setenv("DDUP_TEST_STATE", "/var/lib/ddup/x.db", 1);
	assert_state_loads("state = !env DDUP_TEST_STATE\n" PROV DOM EP, 0600, 1,
	    0, "/var/lib/ddup/x.db");
	unsetenv("DDUP_TEST_STATE");
	errs = load("state = !env DDUP_NOT_SET_EVER\n" PROV DOM EP, 0600, 1, &c);
	assert_null(c);
	assert_string_equal(errs, "F:1: 'state': environment variable "
	    "DDUP_NOT_SET_EVER is not set\n");
	free(errs);
}

/*
 * The decision digest: one config, spelt other ways, gives one digest;
 * a key the decision depends on changes it; a host key does not.
 */
static void
digest_of(const char *text, char out[CONFIG_DIGEST_LEN])
{
	struct config *c;
	char *errs;

	errs = load(text, 0600, 0, &c);
	if (c == NULL)
		fail_msg("%s: %s", text, errs);
	free(errs);
	config_decision_digest(c, out);
	assert_int_equal(strlen(out), 64);
	config_free(c);
}

#define FLEET	"checkers = a, b, c\n"
static const struct {
	const char	*text;
	int		 same;		/* as the first */
} digests[] = {
	{ FLEET "checker = a\n" PROV DOM EP EP2, 1 },
	/* Host keys, and what decides nothing. */
	{ FLEET "checker = b\n" PROV DOM EP EP2, 1 },
	{ FLEET "checker = a\ncontrolUrl = http://127.0.0.1:9/\n" PROV DOM EP
	  EP2, 1 },
	{ FLEET "checker = a\ncaFile = /etc/ssl/certs/ca-certificates.crt\n"
	  PROV DOM EP EP2, 1 },
	{ FLEET "checker = a\nstate = /tmp/other.db\nmaxParallel = 3\n"
	  "logFormat = json\nhistory = 1d\n" PROV DOM EP EP2, 1 },
	/* Secrets. */
	{ FLEET "checker = a\n"
	  "[provider dns]\ntype = rfc2136\nserver = 127.0.0.1:5353\n"
	  "zone = example.test\nkeyName = ddns-key\n"
	  "keySecret = b3RoZXJzZWNyZXRvdGhlcnNlY3JldG90aGVyc2VjcmV0MTI=\n"
	  DOM EP EP2, 1 },
	/* The same values written another way. */
	{ "checkers = c,b ,a\nchecker = a\nquorum = 2\ninterval = 30000ms\n"
	  PROV "[domain APP.example.test.]\nprovider = dns\nttl = 120\n"
	  "timeout = 3s\nexpectStatus = 2xx\n" EP EP2, 1 },
	/* Decision keys. */
	{ FLEET "checker = a\nquorum = 3\n" PROV DOM EP EP2, 0 },
	{ "checkers = a, b, c, d\nchecker = a\n" PROV DOM EP EP2, 0 },
	{ FLEET "checker = a\ninterval = 20s\n" PROV DOM EP EP2, 0 },
	{ FLEET "checker = a\nattempts = 3\n" PROV DOM EP EP2, 0 },
	{ FLEET "checker = a\n" PROV DOM "ttl = 60\n" EP EP2, 0 },
	{ FLEET "checker = a\n" PROV DOM "expectBody = ok\n" EP EP2, 0 },
	{ FLEET "checker = a\n" PROV DOM "timeout = 2s\n" EP EP2, 0 },
	{ FLEET "checker = a\n" PROV DOM EP "priority = 1\n" EP2, 0 },
	{ FLEET "checker = a\n" PROV DOM EP "host = x.example.test\n" EP2, 0 },
	{ FLEET "checker = a\n" PROV DOM EP2 EP, 0 },
	{ FLEET "checker = a\n" PROV DOM EP, 0 },
	{ FLEET "checker = a\n"
	  "[provider dns]\ntype = rfc2136\nserver = 127.0.0.1:5354\n"
	  "zone = example.test\nkeyName = ddns-key\n"
	  "keySecret = " SECRET "\n" DOM EP EP2, 0 },
};

static void
test_digest(void **state)
{
	char first[CONFIG_DIGEST_LEN], d[CONFIG_DIGEST_LEN];
	size_t i;

	(void)state;
	digest_of(digests[0].text, first);
	for (i = 1; i < sizeof(digests) / sizeof(digests[0]); i++) {
		digest_of(digests[i].text, d);
		if ((strcmp(d, first) == 0) != digests[i].same)
			fail_msg("case %zu: digest %s the first's", i,
			    digests[i].same ? "differs from" : "is");
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_cname_proxied),
		cmocka_unit_test(test_inherit_and_case),
		cmocka_unit_test(test_policies),
		cmocka_unit_test(test_secrets),
		cmocka_unit_test(test_fleet),
		cmocka_unit_test(test_state_uri),
		cmocka_unit_test(test_digest),
		cmocka_unit_test(test_provider_check),
		cmocka_unit_test(test_warnings),
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_notify),
		cmocka_unit_test(test_parse_mixes),
		cmocka_unit_test(test_twice),
		cmocka_unit_test(test_samples),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
