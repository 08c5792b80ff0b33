/*
 * The server certificate's expiry (ddup.ini(5), certWarn), for every
 * check that makes a TLS handshake: libcurl's certificate information
 * (CURLOPT_CERTINFO), whose first certificate is the server's, and its
 * "Expire date" as OpenSSL prints it ("Jan  2 03:04:05 2027 GMT").
 */

#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>

#include "check/type.h"

int
check_cert_setup(CURL *e, int want)
{
	return curl_easy_setopt(e, CURLOPT_CERTINFO, want ? 1L : 0L) ==
	    CURLE_OK ? 0 : -1;
}

/*
 * The number of at least min and at most max digits at *s, moved past
 * them; -1 when there are not.
 */
static long
digits(const char **s, int min, int max)
{
	long	 v = 0;
	int	 n = 0;

	while (n < max && **s >= '0' && **s <= '9') {
		v = v * 10 + (**s - '0');
		(*s)++;
		n++;
	}
	return n >= min ? v : -1;
}

/* Whether *s starts with c, moved past it. */
static int
eat(const char **s, char c)
{
	if (**s != c)
		return 0;
	(*s)++;
	return 1;
}

long long
check_cert_parse(const char *s)
{
	static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
	long		 mi = 0, day, hh, mm, ss, year;
	long long	 y, era, yoe, doy, doe, days;

	if (s == NULL)
		return 0;
	while (*s == ' ')
		s++;
	while (mi < 12 && strncmp(s, months + 3 * mi, 3) != 0)
		mi++;
	if (mi++ == 12)
		return 0;
	s += 3;
	if (!eat(&s, ' '))
		return 0;
	(void)eat(&s, ' ');		/* "Jan  2": a day of one digit */
	day = digits(&s, 1, 2);
	if (!eat(&s, ' ') || (hh = digits(&s, 2, 2)) < 0 || !eat(&s, ':') ||
	    (mm = digits(&s, 2, 2)) < 0 || !eat(&s, ':') ||
	    (ss = digits(&s, 2, 2)) < 0 || !eat(&s, ' ') ||
	    (year = digits(&s, 4, 4)) < 0 || strcmp(s, " GMT") != 0)
		return 0;
	if (day < 1 || day > 31 || hh > 23 || mm > 59 || ss > 60 ||
	    year < 1970)
		return 0;
	/*
	 * Days since 1970 from the civil date, years starting in March
	 * (Howard Hinnant's days_from_civil; year >= 1970 keeps y >= 0).
	 */
	y = year - (mi <= 2);
	era = y / 400;
	yoe = y - era * 400;
	doy = (153 * (mi + (mi > 2 ? -3 : 9)) + 2) / 5 + day - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	days = era * 146097 + doe - 719468;
	return days * 86400 + hh * 3600LL + mm * 60LL + ss;
}

long long
check_cert_expires(CURL *e)
{
	struct curl_certinfo *ci = NULL;
	struct curl_slist *l;

	if (curl_easy_getinfo(e, CURLINFO_CERTINFO, &ci) != CURLE_OK ||
	    ci == NULL || ci->num_of_certs < 1)
		return 0;
	for (l = ci->certinfo[0]; l != NULL; l = l->next)
		if (strncasecmp(l->data, "Expire date:", 12) == 0)
			return check_cert_parse(l->data + 12);
	return 0;
}
