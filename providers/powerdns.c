/*
 * PowerDNS Authoritative HTTP API (libcurl easy interface, jansson).
 *
 * replace() is one PATCH of the zone with one RRset per family and
 * changetype REPLACE; PowerDNS applies all RRsets of a PATCH in one
 * transaction (all or nothing), and "records": [] deletes an RRset.
 * read() is one GET of the zone restricted to the name (rrset_name).
 *
 * https://doc.powerdns.com/authoritative/http-api/zone.html
 *
 * The API key travels only in the X-API-Key header: it never appears in
 * a URL, an error or a log line.  Answers are untrusted: bodies are
 * capped, parsed strictly, and each parser takes (buffer, length) so it
 * can be fuzzed on its own.
 */

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>
#include <jansson.h>

#include "config.h"
#include "provider.h"
#include "util.h"

#define PD_DEFAULT_TIMEOUT	"10s"
#define PD_BODY_MAX		((size_t)4 * 1024 * 1024)
#define PD_USER_AGENT		"ddup/1.0"

static const struct provider_key powerdns_keys[] = {
	{ "baseUrl", PK_REQUIRED },
	{ "apiKey", PK_REQUIRED | PK_SECRET },
	{ "serverId", 0 },
	{ "zone", PK_REQUIRED },
	{ "timeout", 0 },
	{ NULL, 0 }
};

struct pdns {
	char		*zone_url;	/* .../servers/ID/zones/ZONE. */
	char		*zone;		/* lower case, no trailing dot */
	char		*key_hdr;	/* "X-API-Key: ..." */
	long long	 timeout_ms;
};

/* A response body, at most PD_BODY_MAX bytes. */
struct body {
	char		*p;
	size_t		 n;
	size_t		 cap;	/* allocated, for body_write */
	int		 over;
};

static int
powerdns_check(const struct provider_cfg *pc, const char **key, char *err,
    size_t errlen)
{
	CURLU *u;
	char *scheme = NULL, *host = NULL, *user = NULL;
	const char *v;
	long long ms;
	int rv = -1;

	*key = "baseUrl";
	v = provider_cfg_get(pc, "baseUrl");
	if ((u = curl_url()) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (curl_url_set(u, CURLUPART_URL, v, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
	    (strcasecmp(scheme, "http") != 0 &&
	    strcasecmp(scheme, "https") != 0) || strchr(v, '?') != NULL ||
	    strchr(v, '#') != NULL) {
		snprintf(err, errlen, "baseUrl: \"%s\" is not an http:// or "
		    "https:// URL (e.g. http://127.0.0.1:8081)", v);
		goto out;
	}
	/* Error messages show the URL: it must not carry credentials. */
	if (curl_url_get(u, CURLUPART_USER, &user, 0) == CURLUE_OK) {
		snprintf(err, errlen, "baseUrl: must not hold a user name or "
		    "password (the key goes in apiKey)");
		goto out;
	}
	*key = "apiKey";
	v = provider_cfg_get(pc, "apiKey");
	/* Never echo the key; a line break would smuggle in a header. */
	if (v[0] == '\0' || strpbrk(v, "\r\n") != NULL) {
		snprintf(err, errlen, "apiKey is empty or has a line break");
		goto out;
	}
	*key = "serverId";
	v = provider_cfg_get(pc, "serverId");
	if (v != NULL && v[0] == '\0') {
		snprintf(err, errlen, "serverId is empty");
		goto out;
	}
	*key = "zone";
	v = provider_cfg_get(pc, "zone");
	if (v[0] == '\0' || v[0] == '.' || strchr(v, '/') != NULL ||
	    strstr(v, "..") != NULL || strlen(v) > 254) {
		snprintf(err, errlen, "zone: \"%s\" is not a DNS zone name",
		    v);
		goto out;
	}
	*key = "timeout";
	v = provider_cfg_get(pc, "timeout");
	if (v != NULL && (parse_duration(v, &ms) == -1 || ms <= 0)) {
		snprintf(err, errlen, "timeout: \"%s\" is not a positive "
		    "duration", v);
		goto out;
	}
	*key = NULL;
	rv = 0;
out:
	curl_free(scheme);
	curl_free(host);
	curl_free(user);
	curl_url_cleanup(u);
	return rv;
}

static void
pdns_free(struct pdns *pd)
{
	if (pd == NULL)
		return;
	free(pd->zone_url);
	free(pd->zone);
	if (pd->key_hdr != NULL) {
		explicit_bzero(pd->key_hdr, strlen(pd->key_hdr));
		free(pd->key_hdr);
	}
	free(pd);
}

static void *
powerdns_create(const struct provider_cfg *pc, char *err, size_t errlen)
{
	struct pdns *pd;
	const char *v;
	char *sid = NULL, *zid = NULL, *base;
	size_t i, len;

	pd = xcalloc(1, sizeof(*pd));
	pd->zone = xstrdup(provider_cfg_get(pc, "zone"));
	len = strlen(pd->zone);
	if (len > 1 && pd->zone[len - 1] == '.')
		pd->zone[len - 1] = '\0';
	for (i = 0; pd->zone[i] != '\0'; i++)
		pd->zone[i] = (char)tolower((unsigned char)pd->zone[i]);
	v = provider_cfg_get(pc, "timeout");
	if (parse_duration(v != NULL ? v : PD_DEFAULT_TIMEOUT,
	    &pd->timeout_ms) == -1 || pd->timeout_ms <= 0) {
		snprintf(err, errlen, "timeout: not a positive duration");
		goto fail;
	}
	v = provider_cfg_get(pc, "apiKey");
	len = strlen("X-API-Key: ") + strlen(v) + 1;
	pd->key_hdr = xmalloc(len);
	snprintf(pd->key_hdr, len, "X-API-Key: %s", v);

	v = provider_cfg_get(pc, "serverId");
	sid = curl_easy_escape(NULL, v != NULL ? v : "localhost", 0);
	zid = curl_easy_escape(NULL, pd->zone, 0);
	if (sid == NULL || zid == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	base = xstrdup(provider_cfg_get(pc, "baseUrl"));
	for (len = strlen(base); len > 0 && base[len - 1] == '/'; len--)
		base[len - 1] = '\0';
	len = strlen(base) + strlen(sid) + strlen(zid) + 64;
	pd->zone_url = xmalloc(len);
	snprintf(pd->zone_url, len, "%s/api/v1/servers/%s/zones/%s.", base,
	    sid, zid);
	free(base);
	curl_free(sid);
	curl_free(zid);
	return pd;
fail:
	curl_free(sid);
	curl_free(zid);
	pdns_free(pd);
	return NULL;
}

static size_t
body_write(char *data, size_t size, size_t nmemb, void *arg)
{
	struct body *b = arg;
	size_t n = size * nmemb;

	/* A short count makes libcurl abort with CURLE_WRITE_ERROR. */
	if (n > PD_BODY_MAX - b->n) {
		b->over = 1;
		return 0;
	}
	/* Doubling: a body of many small pieces is not copied over and over. */
	if (b->n + n + 1 > b->cap) {
		b->cap = b->cap > 0 ? b->cap : 16384;
		while (b->cap < b->n + n + 1)
			b->cap *= 2;
		b->p = xrealloc(b->p, b->cap);
	}
	memcpy(b->p + b->n, data, n);
	b->n += n;
	b->p[b->n] = '\0';
	return n;
}

/*
 * Replaces what could break or forge a log line (control characters,
 * bytes outside ASCII) in text taken from an answer.
 */
static void
printable(char *s)
{
	for (; *s != '\0'; s++)
		if (!isprint((unsigned char)*s))
			*s = '?';
}

/*
 * The `error` text of a PowerDNS error document
 * ({"error": "...", "errors": [...]}); -1 when there is none.
 */
static int
parse_error(const char *buf, size_t len, char *out, size_t outlen)
{
	json_t *root, *e;
	json_error_t je;
	int rv = -1;

	if ((root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je)) == NULL)
		return -1;
	if (json_is_object(root) && (e = json_object_get(root, "error")) !=
	    NULL && json_is_string(e)) {
		snprintf(out, outlen, "%s", json_string_value(e));
		printable(out);
		rv = 0;
	}
	json_decref(root);
	return rv;
}

/* A short printable excerpt of a text body, for error messages. */
static void
excerpt(const struct body *b, char *out, size_t outlen)
{
	size_t i, j;

	for (i = 0, j = 0; i < b->n && j + 1 < outlen && j < 120; i++) {
		if (b->p[i] == '\n' || b->p[i] == '\r')
			break;
		out[j++] = isprint((unsigned char)b->p[i]) ? b->p[i] : '?';
	}
	out[j] = '\0';
}

static const char *
reason(long status)
{
	switch (status) {
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 409: return "Conflict";
	case 422: return "Unprocessable Entity";
	case 429: return "Too Many Requests";
	case 500: return "Internal Server Error";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	}
	return "";
}

/* Classifies a non-2xx answer and writes the message. */
static enum perr
status_error(const struct pdns *pd, const char *url, long status,
    const char *ctype, const struct body *b, char *err, size_t errlen)
{
	char detail[256], text[128];
	enum perr e;

	detail[0] = '\0';
	if (ctype != NULL && strncasecmp(ctype, "application/json", 16) == 0
	    && parse_error(b->p, b->n, text, sizeof(text)) == 0)
		snprintf(detail, sizeof(detail), ": %s", text);
	else if (b->n > 0) {
		excerpt(b, text, sizeof(text));
		if (text[0] != '\0' && strcasecmp(text, reason(status)) != 0)
			snprintf(detail, sizeof(detail), ": %s", text);
	}
	if (status == 401 || status == 403) {
		e = PERR_AUTH;
		snprintf(detail, sizeof(detail), ": check apiKey");
	} else if (status == 404) {
		e = PERR_NOTFOUND;
		snprintf(detail, sizeof(detail), ": zone %s. not found (or "
		    "wrong serverId)", pd->zone);
	} else if (status == 429)
		e = PERR_RATELIMIT;
	else if (status >= 300 && status <= 399) {
		/* Following one could send the key to another host. */
		e = PERR_INVALID;
		snprintf(detail, sizeof(detail), ": redirects are not "
		    "followed (check baseUrl)");
	}
	else if (status >= 500)
		e = PERR_TEMP;
	else
		e = PERR_INVALID;
	snprintf(err, errlen, "PowerDNS at %s: %ld%s%s%s", url, status,
	    reason(status)[0] != '\0' ? " " : "", reason(status), detail);
	return e;
}

/*
 * One API call.  Success is the status want (any 2xx when want is 0)
 * with the body in *b; anything else is classified into a perr with the
 * URL and status in err.
 */
static enum perr
api_call(const struct pdns *pd, const char *method, const char *url,
    const char *json, long want, struct body *b, char *err, size_t errlen)
{
	CURL *c;
	CURLcode cc;
	struct curl_slist *hdrs = NULL, *h;
	char ebuf[CURL_ERROR_SIZE];
	char *ctype = NULL, text[128];
	curl_off_t retry = -1;
	size_t len;
	long status = 0;
	enum perr rv = PERR_TEMP;

	if ((c = curl_easy_init()) == NULL) {
		snprintf(err, errlen, "PowerDNS at %s: cannot start libcurl",
		    url);
		return PERR_TEMP;
	}
	if ((h = curl_slist_append(hdrs, pd->key_hdr)) == NULL)
		goto oom;
	hdrs = h;
	if ((h = curl_slist_append(hdrs, "Accept: application/json")) == NULL)
		goto oom;
	hdrs = h;
	if (json != NULL) {
		if ((h = curl_slist_append(hdrs,
		    "Content-Type: application/json")) == NULL)
			goto oom;
		hdrs = h;
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, json);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(json));
	}
	ebuf[0] = '\0';
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(c, CURLOPT_USERAGENT, PD_USER_AGENT);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)pd->timeout_ms);
	curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE,
	    (curl_off_t)PD_BODY_MAX);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, body_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, b);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, ebuf);
	/* The system trust store: caFile is for health checks only. */

	cc = curl_easy_perform(c);
	if ((cc == CURLE_WRITE_ERROR && b->over) ||
	    cc == CURLE_FILESIZE_EXCEEDED) {
		snprintf(err, errlen, "PowerDNS at %s: unexpected answer: "
		    "body larger than %zu bytes", url, PD_BODY_MAX);
		rv = PERR_INVALID;
		goto out;
	}
	if (cc == CURLE_OPERATION_TIMEDOUT) {
		snprintf(err, errlen, "PowerDNS at %s: no answer within "
		    "%lldms", url, pd->timeout_ms);
		if (pd->timeout_ms % 1000 == 0)
			snprintf(err, errlen, "PowerDNS at %s: no answer "
			    "within %llds", url, pd->timeout_ms / 1000);
		rv = PERR_NET;
		goto out;
	}
	if (cc != CURLE_OK) {
		snprintf(err, errlen, "PowerDNS at %s: %s", url,
		    ebuf[0] != '\0' ? ebuf : curl_easy_strerror(cc));
		/* Nothing came back: the server is not there for this run. */
		if (cc == CURLE_COULDNT_CONNECT ||
		    cc == CURLE_COULDNT_RESOLVE_HOST ||
		    cc == CURLE_SEND_ERROR || cc == CURLE_RECV_ERROR ||
		    cc == CURLE_GOT_NOTHING)
			rv = PERR_NET;
		goto out;
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ctype);
	if (status < 200 || status > 299) {
		rv = status_error(pd, url, status, ctype, b, err, errlen);
		/* A one-shot run does not wait: the next run is the retry. */
		if (status == 429 && curl_easy_getinfo(c, CURLINFO_RETRY_AFTER,
		    &retry) == CURLE_OK && retry > 0 &&
		    (len = strlen(err)) + 1 < errlen)
			snprintf(err + len, errlen - len, " (retry after "
			    "%" CURL_FORMAT_CURL_OFF_T "s)", retry);
		goto out;
	}
	/*
	 * Another 2xx than PowerDNS gives (a proxy's page, a captive
	 * portal) says nothing about the change: it failed, and the next
	 * run tries again.
	 */
	if (want != 0 && status != want) {
		excerpt(b, text, sizeof(text));
		snprintf(err, errlen, "PowerDNS at %s: unexpected answer: %ld "
		    "to a %s, where PowerDNS answers %ld%s%s", url, status,
		    method, want, text[0] != '\0' ? ": " : "", text);
		rv = PERR_TEMP;
		goto out;
	}
	rv = PERR_OK;
	goto out;
oom:
	snprintf(err, errlen, "PowerDNS at %s: out of memory", url);
out:
	curl_slist_free_all(hdrs);
	curl_easy_cleanup(c);
	return rv;
}

/*
 * Fills sets from a zone document restricted to one name
 * ({"rrsets": [{"name", "type", "ttl", "records": [{"content",
 * "disabled"}]}], ...}).  Every RRset must have the documented types;
 * only A and AAAA of name (absolute, lower case) are kept, and disabled
 * records are skipped.  Returns 0, or -1 with the problem in err.
 */
static int
parse_zone(const char *buf, size_t len, const char *name, struct rrset *sets,
    size_t nsets, char *err, size_t errlen)
{
	json_t *root, *rrsets, *rs, *recs, *rec, *jname, *jtype, *jttl;
	json_t *content, *disabled;
	json_error_t je;
	struct addr a;
	size_t i, j, k;
	int fam, rv = -1;

	if ((root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je)) ==
	    NULL) {
		snprintf(err, errlen, "not JSON: %s (line %d)", je.text,
		    je.line);
		printable(err);
		return -1;
	}
	rrsets = json_is_object(root) ? json_object_get(root, "rrsets") : NULL;
	if (!json_is_array(rrsets)) {
		snprintf(err, errlen, "no rrsets array");
		goto out;
	}
	json_array_foreach(rrsets, i, rs) {
		jname = json_object_get(rs, "name");
		jtype = json_object_get(rs, "type");
		jttl = json_object_get(rs, "ttl");
		recs = json_object_get(rs, "records");
		if (!json_is_object(rs) || !json_is_string(jname) ||
		    !json_is_string(jtype) || !json_is_array(recs) ||
		    (jttl != NULL && !json_is_integer(jttl))) {
			snprintf(err, errlen, "rrsets[%zu] lacks name, type, "
			    "ttl or records of the right type", i);
			goto out;
		}
		if (strcasecmp(json_string_value(jname), name) != 0)
			continue;
		if (strcmp(json_string_value(jtype), "A") == 0)
			fam = 4;
		else if (strcmp(json_string_value(jtype), "AAAA") == 0)
			fam = 6;
		else
			continue;
		for (k = 0; k < nsets && sets[k].family != fam; k++)
			;
		if (k == nsets)
			continue;
		json_array_foreach(recs, j, rec) {
			content = json_object_get(rec, "content");
			disabled = json_object_get(rec, "disabled");
			if (!json_is_object(rec) || !json_is_string(content) ||
			    (disabled != NULL && !json_is_boolean(disabled))) {
				snprintf(err, errlen, "rrsets[%zu].records[%zu] "
				    "lacks content or disabled of the right "
				    "type", i, j);
				goto out;
			}
			if (json_is_true(disabled))
				continue;
			if (addr_parse(json_string_value(content), &a) == -1 ||
			    a.family != fam) {
				snprintf(err, errlen, "rrsets[%zu].records[%zu]"
				    ": \"%.64s\" is not an IPv%d address", i, j,
				    json_string_value(content), fam);
				goto out;
			}
			addrset_add_addr(&sets[k].addrs, &a);
		}
		if (jttl == NULL || json_integer_value(jttl) < 0 ||
		    json_integer_value(jttl) > 2147483647) {
			snprintf(err, errlen, "rrsets[%zu]: bad ttl", i);
			goto out;
		}
		if (sets[k].addrs.n > 0)
			sets[k].ttl = (long)json_integer_value(jttl);
	}
	rv = 0;
out:
	/* The reason quotes the answer, and goes to the log. */
	if (rv == -1)
		printable(err);
	json_decref(root);
	return rv;
}

/* "app.example.test." */
static char *
abs_name(const char *fqdn)
{
	size_t i, len;
	char *s;

	len = strlen(fqdn);
	s = xmalloc(len + 2);
	for (i = 0; i < len; i++)
		s[i] = (char)tolower((unsigned char)fqdn[i]);
	if (len == 0 || s[len - 1] != '.')
		s[len++] = '.';
	s[len] = '\0';
	return s;
}

static enum perr
powerdns_read(void *priv, const char *fqdn, struct rrset *sets, size_t nsets,
    char *err, size_t errlen)
{
	struct pdns *pd = priv;
	struct body b = { NULL, 0, 0, 0 };
	char *name, *esc = NULL, *url = NULL, perr_[256];
	size_t i, len;
	enum perr rv = PERR_TEMP;

	for (i = 0; i < nsets; i++) {
		sets[i].ttl = 0;
		addrset_free(&sets[i].addrs);
	}
	name = abs_name(fqdn);
	if ((esc = curl_easy_escape(NULL, name, 0)) == NULL) {
		snprintf(err, errlen, "PowerDNS: out of memory");
		goto out;
	}
	len = strlen(pd->zone_url) + strlen(esc) + 32;
	url = xmalloc(len);
	snprintf(url, len, "%s?rrset_name=%s", pd->zone_url, esc);
	if ((rv = api_call(pd, "GET", url, NULL, 0, &b, err, errlen)) !=
	    PERR_OK)
		goto out;
	if (parse_zone(b.p != NULL ? b.p : "", b.n, name, sets, nsets, perr_,
	    sizeof(perr_)) == -1) {
		for (i = 0; i < nsets; i++) {
			sets[i].ttl = 0;
			addrset_free(&sets[i].addrs);
		}
		snprintf(err, errlen, "PowerDNS at %s: unexpected answer: %s",
		    url, perr_);
		rv = PERR_INVALID;
		goto out;
	}
	rv = PERR_OK;
out:
	free(b.p);
	free(url);
	curl_free(esc);
	free(name);
	return rv;
}

/* {"rrsets": [{name, type, ttl, changetype REPLACE, records}, ...]} */
static char *
patch_body(const char *name, const struct rrset *sets, size_t nsets)
{
	json_t *root, *rrsets, *recs;
	size_t i, j;
	char *s = NULL;

	root = json_object();
	rrsets = json_array();
	if (root == NULL || rrsets == NULL ||
	    json_object_set_new(root, "rrsets", rrsets) == -1)
		goto out;
	for (i = 0; i < nsets; i++) {
		if ((recs = json_array()) == NULL)
			goto out;
		for (j = 0; j < sets[i].addrs.n; j++)
			json_array_append_new(recs, json_pack("{s:s, s:b}",
			    "content", sets[i].addrs.v[j].s, "disabled", 0));
		if (json_array_size(recs) != sets[i].addrs.n ||
		    json_array_append_new(rrsets, json_pack("{s:s, s:s, "
		    "s:I, s:s, s:o}", "name", name, "type", sets[i].family ==
		    6 ? "AAAA" : "A", "ttl", (json_int_t)sets[i].ttl,
		    "changetype", "REPLACE", "records", recs)) == -1)
			goto out;
	}
	s = json_dumps(root, JSON_COMPACT);
out:
	json_decref(root);
	return s;
}

static enum perr
powerdns_replace(void *priv, const char *fqdn, const struct rrset *sets,
    size_t nsets, char *err, size_t errlen)
{
	struct pdns *pd = priv;
	struct body b = { NULL, 0, 0, 0 };
	char *name, *json;
	enum perr rv;

	name = abs_name(fqdn);
	if ((json = patch_body(name, sets, nsets)) == NULL) {
		snprintf(err, errlen, "PowerDNS: cannot build the request for "
		    "%s", fqdn);
		rv = PERR_TEMP;
		goto out;
	}
	/* PowerDNS answers a PATCH that worked with 204 No Content. */
	rv = api_call(pd, "PATCH", pd->zone_url, json, 204, &b, err, errlen);
out:
	free(b.p);
	free(json);
	free(name);
	return rv;
}

static void
powerdns_free(void *priv)
{
	pdns_free(priv);
}

const struct provider_ops powerdns_ops = {
	.type = "powerdns",
	.keys = powerdns_keys,
	.check = powerdns_check,
	.create = powerdns_create,
	.read = powerdns_read,
	.replace = powerdns_replace,
	.free = powerdns_free,
};
