/*
 * The server certificate's expiry (ddup.ini(5), certWarn), for every
 * check that makes a TLS handshake: libcurl's certificate information
 * (CURLOPT_CERTINFO), whose first certificate is the server's, and its
 * "Expire date" as OpenSSL prints it ("Jan  2 03:04:05 2027 GMT").
 */

#include <stdio.h>
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

long long
check_cert_parse(const char *s)
{
	static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
	char		 mon[4], zone[4];
	const char	*m;
	int		 day, hh, mm, ss, year, n = 0;
	long long	 days, y, era, yoe, doy, doe;
	long		 mi;

	if (s == NULL || sscanf(s, "%3s %d %d:%d:%d %d %3s%n", mon, &day, &hh,
	    &mm, &ss, &year, zone, &n) != 7 || s[n] != '\0' ||
	    strcmp(zone, "GMT") != 0 || strlen(mon) != 3 ||
	    (m = strstr(months, mon)) == NULL || (m - months) % 3 != 0 ||
	    day < 1 || day > 31 || hh < 0 || hh > 23 || mm < 0 || mm > 59 ||
	    ss < 0 || ss > 60 || year < 1970 || year > 9999)
		return 0;
	mi = (long)((m - months) / 3) + 1;
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
	return days * 86400 + hh * 3600 + mm * 60 + ss;
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
