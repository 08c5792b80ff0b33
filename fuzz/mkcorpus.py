#!/usr/bin/python3
"""Writes the seed corpora of the fuzz targets into fuzz/corpus/.

Each seed is a meaningful input: a value as an operator writes it, a
real-looking DNS reply in wire format, a PowerDNS API answer.  Run it
again after changing it; it rewrites only the files it owns (named
seed-*), so minimised crash inputs kept in the corpus stay.
"""

import json
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
NAME = "app.example.test."
ZONE = "example.test."


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data)


def text_seeds():
    for i, v in enumerate(["250ms", "3s", "5m", "1h", "7d", "30", "0",
                           "9223372036854775807ms", "9223372036854775s",
                           "-5", "007", "1x", ""]):
        write("duration", "%02d" % i, v)
    for i, v in enumerate(["200", "2xx", "200, 204, 3xx", "2XX,404",
                           "100,101,102,103,104,105,106,107,108,109,110,"
                           "111,112,113,114,115", "600", " 204 ", "2x0",
                           "200,,204"]):
        write("expect", "%02d" % i, v)
    for i, v in enumerate(["192.0.2.1", "2001:db8::1",
                           "192.0.2.2 192.0.2.1 2001:db8::2",
                           "::ffff:192.0.2.1 ::1 0.0.0.0",
                           "2001:DB8:0:0:0:0:0:1\t2001:db8::1",
                           "192.0.2.1 192.0.2.1", "192.0.2.256",
                           "fe80::1%eth0", "1.2.3", ""]):
        write("addr", "%02d" % i, v)
    for i, v in enumerate(["2026-11-30T10:25:56Z", "2026-11-30T10:25:56.123Z",
                           "1970-01-01T00:00:00Z", "2024-02-29 23:59:59z",
                           "2023-02-29T00:00:00Z", "9999-12-31T23:59:59Z",
                           "1000-01-01T00:00:00.5Z", "2026-11-30T10:25:60Z"]):
        write("isotime", "%02d" % i, v)
    for i, v in enumerate(["Jan  2 03:04:05 2027 GMT", " Dec 31 23:59:59 9999 GMT",
                           "Feb 29 12:00:00 2028 GMT", "Feb 31 00:00:00 2027 GMT",
                           "Jan 2 03:04:05 2027 GMT", "Jun 30 23:59:60 2030 GMT",
                           "Jam  2 03:04:05 2027 GMT", "20270102030405Z"]):
        write("certdate", "%02d" % i, v)
    for i, v in enumerate(["http://127.0.0.1:8080/health", "https://www.example.com/",
                           "http://a:65535/?q#f", "http://user:pw@a/", "http://[::1]:80/",
                           "http://a%41/", "http://a:65536/", "http://0x7f.1/",
                           "HTTPS://A/b c", "http://a:/x", "http:///a"]):
        write("url", "%02d" % i, v)
    # `send` of tcp:// and tls:// checks: escapes good and bad.
    for i, v in enumerate(["PING\\r\\n", "EHLO ddup\\r\\nQUIT\\r\\n",
                           "\\x00\\x01\\xff\\xAb", "a\\tb\\\\c", "\\q", "x\\",
                           "\\x4", "\\xg0", "plain text {} \"'", "\\\\x41",
                           "A" * 4097, "\\n" * 2049]):
        write("send", "%02d" % i, v)


# DNS wire format (RFC 1035 section 4).

def dname(name, ptr=None):
    out = b""
    for label in name.rstrip(".").split("."):
        if label:
            out += bytes([len(label)]) + label.encode()
    return out + b"\0"


def rr(owner, rtype, rclass, ttl, rdata):
    return owner + struct.pack("!HHIH", rtype, rclass, ttl, len(rdata)) + rdata


def a(ip):
    return bytes(int(x) for x in ip.split("."))


def aaaa(ip):
    import ipaddress
    return ipaddress.IPv6Address(ip).packed


def msg(rid=0x1234, qr=1, opcode=0, aa=1, tc=0, rd=0, ra=0, rcode=0,
        question=(NAME, 1), an=(), ns=(), ar=()):
    flags = (qr << 15) | (opcode << 11) | (aa << 10) | (tc << 9) | \
        (rd << 8) | (ra << 7) | rcode
    qd = b""
    qdcount = 0
    if question is not None:
        qd = dname(question[0]) + struct.pack("!HH", question[1], 1)
        qdcount = 1
    return struct.pack("!HHHHHH", rid, flags, qdcount, len(an), len(ns),
                       len(ar)) + qd + b"".join(an) + b"".join(ns) + \
        b"".join(ar)


def soa():
    rdata = dname("ns." + ZONE) + dname("hostmaster." + ZONE) + \
        struct.pack("!IIIII", 2024010101, 3600, 600, 86400, 60)
    return rr(dname(ZONE), 6, 1, 60, rdata)


PTR_Q = b"\xc0\x0c"     # compressed pointer to the question name


def tsig(error, mac=b"\x11" * 32):
    rdata = dname("hmac-sha256.") + struct.pack("!HIH", 0, 1700000000, 300)
    rdata += struct.pack("!H", len(mac)) + mac
    rdata += struct.pack("!HHH", 0x1234, error, 0)
    return rr(dname("ddup-key."), 250, 255, 0, rdata)


def dns_seeds():
    w = lambda n, d: write("dns", n, d)
    w("a-two", msg(an=[rr(PTR_Q, 1, 1, 60, a("192.0.2.1")),
                       rr(PTR_Q, 1, 1, 60, a("192.0.2.2"))]))
    w("a-ttl-mixed", msg(an=[rr(PTR_Q, 1, 1, 300, a("192.0.2.9")),
                             rr(PTR_Q, 1, 1, 0, a("192.0.2.1")),
                             rr(PTR_Q, 1, 1, 60, a("192.0.2.1"))]))
    w("aaaa", msg(question=(NAME, 28),
                  an=[rr(PTR_Q, 28, 1, 60, aaaa("2001:db8::1")),
                      rr(PTR_Q, 28, 1, 60, aaaa("2001:db8::2"))]))
    w("a-uncompressed-mixed-case",
      msg(an=[rr(dname("App.EXAMPLE.test."), 1, 1, 60, a("192.0.2.3"))]))
    w("a-foreign", msg(an=[rr(dname("other.example.test."), 1, 1, 60,
                              a("198.51.100.1")),
                           rr(PTR_Q, 1, 3, 60, a("198.51.100.2")),
                           rr(PTR_Q, 28, 1, 60, aaaa("2001:db8::9")),
                           rr(PTR_Q, 1, 1, 60, b"\x01\x02\x03"),
                           rr(PTR_Q, 1, 1, 60, a("192.0.2.4"))]))
    w("cname", msg(an=[rr(PTR_Q, 5, 1, 60, dname("web.example.test.")),
                       rr(dname("web.example.test."), 1, 1, 60,
                          a("192.0.2.5"))]))
    w("nodata", msg(ns=[soa()]))
    w("nxdomain", msg(rcode=3, ns=[soa()]))
    w("not-aa", msg(aa=0, ra=1, an=[rr(PTR_Q, 1, 1, 60, a("192.0.2.1"))]))
    w("truncated", msg(tc=1))
    for rcode, n in [(1, "formerr"), (2, "servfail"), (4, "notimpl"),
                     (5, "refused"), (6, "yxdomain"), (7, "yxrrset"),
                     (8, "nxrrset"), (9, "notauth"), (10, "notzone"),
                     (15, "rcode15")]:
        w("rcode-" + n, msg(rcode=rcode))
    # Update replies: opcode 5, the zone in the question section.
    w("update-ok", msg(opcode=5, aa=0, question=(ZONE, 6)))
    w("update-ok-tsig", msg(opcode=5, aa=0, question=(ZONE, 6),
                            ar=[tsig(0)]))
    w("update-notauth-badsig", msg(opcode=5, aa=0, rcode=9,
                                   question=(ZONE, 6),
                                   ar=[tsig(16, mac=b"")]))
    w("update-notauth-badkey", msg(opcode=5, aa=0, rcode=9,
                                   question=(ZONE, 6),
                                   ar=[tsig(17, mac=b"")]))
    w("update-refused", msg(opcode=5, aa=0, rcode=5, question=(ZONE, 6)))
    w("update-servfail", msg(opcode=5, aa=0, rcode=2, question=(ZONE, 6)))
    w("edns", msg(an=[rr(PTR_Q, 1, 1, 60, a("192.0.2.1"))],
                  ar=[b"\0" + struct.pack("!HHIH", 41, 1232, 0, 0)]))
    w("loop-pointer", msg(question=None, an=[b"\xc0\x0c" + b"\0" * 10]))


def zone_doc(rrsets):
    return {"account": "", "api_rectify": False, "dnssec": False,
            "edited_serial": 2024010102, "id": ZONE, "kind": "Native",
            "last_check": 0, "master_tsig_key_ids": [], "masters": [],
            "name": ZONE, "notified_serial": 0, "nsec3narrow": False,
            "nsec3param": "", "rrsets": rrsets, "serial": 2024010102,
            "slave_tsig_key_ids": [], "soa_edit": "",
            "soa_edit_api": "DEFAULT",
            "url": "/api/v1/servers/localhost/zones/" + ZONE}


def rrset(name, rtype, ttl, contents, disabled=()):
    return {"comments": [], "name": name, "type": rtype, "ttl": ttl,
            "records": [{"content": c, "disabled": c in disabled}
                        for c in contents]}


def powerdns_seeds():
    w = lambda n, d: write("powerdns", n, json.dumps(d, indent=1)
                           if not isinstance(d, (str, bytes)) else d)
    w("zone-a", zone_doc([rrset(NAME, "A", 60, ["192.0.2.1", "192.0.2.2"])]))
    w("zone-both", zone_doc([
        rrset(NAME, "A", 60, ["192.0.2.2", "192.0.2.1"]),
        rrset(NAME, "AAAA", 300, ["2001:db8::1"]),
        rrset(NAME, "TXT", 60, ['"v=spf1 -all"'])]))
    w("zone-disabled", zone_doc([rrset(NAME, "A", 60,
                                       ["192.0.2.1", "192.0.2.7"],
                                       disabled=["192.0.2.7"])]))
    w("zone-other-names", zone_doc([
        rrset("other.example.test.", "A", 60, ["198.51.100.1"]),
        rrset("APP.example.test.", "AAAA", 60, ["2001:DB8::5"]),
        rrset(ZONE, "SOA", 3600, ["ns.example.test. hostmaster."
                                  "example.test. 1 10800 3600 604800 3600"])]))
    w("zone-empty", zone_doc([]))
    w("zone-wrong-family", zone_doc([rrset(NAME, "A", 60, ["2001:db8::1"])]))
    w("zone-bad-ttl", zone_doc([rrset(NAME, "A", -1, ["192.0.2.1"])]))
    w("zone-ttl-string", '{"rrsets": [{"name": "%s", "type": "A", "ttl": '
      '"60", "records": []}]}' % NAME)
    w("zone-duplicate-key", '{"rrsets": [], "rrsets": []}')
    w("zone-truncated", '{"rrsets": [{"name": "app.exa')
    w("zone-escaped", '{"rrsets": [{"name": "app.example.test.", "type": '
      '"A", "ttl": 60, "records": [{"content": "192.0.2.\\u0031", '
      '"disabled": false}]}]}')
    w("error-json", '{"error": "Backend error: database is locked"}')
    w("error-json-errors", '{"error": "RRset app.example.test. IN A: '
      'Conflicts with pre-existing RRset", "errors": ["a", "b"]}')
    w("error-html", "<html><head><title>502 Bad Gateway</title></head>"
      "<body><h1>Bad Gateway</h1></body></html>\n")
    w("error-text", "Unauthorized")
    w("error-empty", "")


def azure_seeds():
    w = lambda n, d: write("azure", n, json.dumps(d, indent=1)
                           if not isinstance(d, (str, bytes)) else d)
    w("token", {"token_type": "Bearer", "expires_in": 3599,
                "ext_expires_in": 3599, "access_token": "eyJ0eXAiOiJKV1Qi.x.y"})
    w("token-lower-bearer", {"token_type": "bearer", "access_token": "t"})
    w("token-newline", '{"token_type": "Bearer", "access_token": "a\\r\\nX: y"}')
    w("token-missing", {"token_type": "Bearer", "expires_in": 1})
    w("token-error", {"error": "invalid_client", "error_description":
                      "AADSTS7000215: Invalid client secret provided.\r\n"
                      "Trace ID: 0000\r\nCorrelation ID: 1111",
                      "error_codes": [7000215], "timestamp": "2026-01-01 00:00:00Z"})
    props = {"metadata": None, "TTL": 60, "fqdn": "app.example.test.",
             "provisioningState": "Succeeded", "targetResource": {}}
    base = {"id": "/subscriptions/s/resourceGroups/g/providers/"
                  "Microsoft.Network/dnszones/example.test/A/app",
            "name": "app", "type": "Microsoft.Network/dnszones/A",
            "etag": "5e1d7b4a-0000-0000-0000-000000000000"}
    w("set-a", dict(base, properties=dict(props, ARecords=[
        {"ipv4Address": "192.0.2.2"}, {"ipv4Address": "192.0.2.1"}])))
    w("set-aaaa", dict(base, type="Microsoft.Network/dnszones/AAAA",
                       properties=dict(props, AAAARecords=[
                           {"ipv6Address": "2001:DB8::1"}])))
    w("set-empty", dict(base, properties=dict(props, ARecords=[])))
    w("set-null-records", dict(base, properties=dict(props, ARecords=None)))
    w("set-wrong-family", dict(base, properties=dict(props, ARecords=[
        {"ipv4Address": "2001:db8::1"}])))
    w("set-ttl-string", dict(base, properties=dict(props, TTL="60")))
    w("set-no-etag", {"properties": dict(props, ARecords=[
        {"ipv4Address": "192.0.2.1"}])})
    w("set-long-etag", dict(base, etag="e" * 200, properties=props))
    w("error-arm", {"error": {"code": "AuthorizationFailed", "message":
                              "The client 'x' does not have authorization."}})
    w("error-notfound", {"code": "NotFound", "message": "The resource record "
                         "'app' does not exist in resource group 'g'."})
    w("error-html", "<html><body>502 Bad Gateway</body></html>")
    w("error-duplicate", '{"error": {"code": "A", "code": "B", "message": "m"}}')


def ovh_seeds():
    w = lambda n, d: write("ovh", n, json.dumps(d, indent=1)
                           if not isinstance(d, (str, bytes)) else d)
    w("time", "1767225600")
    w("time-negative", "-5")
    w("time-string", '"1767225600"')
    w("ids", [5000000001, 5000000002, 17])
    w("ids-empty", [])
    w("ids-many", list(range(20)))
    w("ids-bad", [1, "2", -3])
    w("record-a", {"id": 5000000001, "zone": "example.test", "subDomain": "app",
                   "fieldType": "A", "target": "192.0.2.1", "ttl": 60})
    w("record-aaaa", {"id": 5000000002, "zone": "example.test",
                      "subDomain": "app", "fieldType": "AAAA",
                      "target": "2001:db8::1", "ttl": 0})
    w("record-null-ttl", {"id": 3, "zone": "example.test", "subDomain": "APP",
                          "fieldType": "A", "target": "192.0.2.3", "ttl": None})
    w("record-other-name", {"id": 4, "zone": "example.test", "subDomain": "www",
                            "fieldType": "A", "target": "192.0.2.4", "ttl": 60})
    w("record-cname", {"id": 5, "zone": "example.test", "subDomain": "app",
                       "fieldType": "CNAME", "target": "other.example.test.",
                       "ttl": 60})
    w("error-signature", {"errorCode": "INVALID_SIGNATURE",
                          "httpCode": "400 Bad Request",
                          "message": "Invalid signature"})
    w("error-not-granted", {"errorCode": "NOT_GRANTED_CALL",
                            "httpCode": "403 Forbidden",
                            "message": "This call has not been granted"})
    w("error-class", {"class": "Client::NotFound",
                      "message": "This service does not exist"})
    w("error-text", "Service Unavailable")


def cf_record(rtype, content, rid, name="app.example.test", ttl=60, proxied=False):
    return {"id": rid, "zone_id": "023e105f4ecef8ad9ca31a8372d0c353",
            "zone_name": "example.test", "name": name, "type": rtype,
            "content": content, "proxiable": True, "proxied": proxied,
            "ttl": ttl, "comment": None, "tags": [], "meta": {"source": "primary"},
            "created_on": "2024-01-01T05:20:00.12345Z",
            "modified_on": "2024-01-01T05:20:00.12345Z"}


def cf_page(records, page=1, pages=1):
    return {"success": True, "errors": [], "messages": [], "result": records,
            "result_info": {"page": page, "per_page": 100, "count": len(records),
                            "total_count": len(records), "total_pages": pages}}


def cloudflare_seeds():
    """Cloudflare API v4 answers, shaped as its OpenAPI schema says."""
    w = lambda n, d: write("cloudflare", n, json.dumps(d, indent=1)
                           if not isinstance(d, (str, bytes)) else d)
    ids = ["%032x" % (0x372e67954025e0ba6aaa6d586b9e0b59 + i) for i in range(8)]
    w("records-a", cf_page([cf_record("A", "192.0.2.1", ids[0]),
                            cf_record("A", "192.0.2.2", ids[1], proxied=True, ttl=1)]))
    w("records-mixed", cf_page([
        cf_record("AAAA", "2001:DB8:0::1", ids[2]),
        cf_record("TXT", "v=spf1 -all", ids[3]),
        cf_record("A", "198.51.100.1", ids[4], name="other.example.test"),
        cf_record("A", "192.0.2.9", ids[5], ttl=300)], page=1, pages=3))
    w("records-cname", cf_page([cf_record("CNAME", "LB.Example.NET.", ids[6])]))
    w("records-empty", cf_page([]))
    w("records-bad-family", cf_page([cf_record("A", "2001:db8::1", ids[0])]))
    w("records-bad-id", cf_page([cf_record("A", "192.0.2.1", "../zones")]))
    w("records-ttl-zero", cf_page([cf_record("A", "192.0.2.1", ids[0], ttl=0)]))
    w("records-no-info", {"success": True, "errors": [], "messages": [],
                          "result": [cf_record("A", "192.0.2.1", ids[0])]})
    w("zones", {"success": True, "errors": [], "messages": [],
                "result": [{"id": ids[7], "name": "example.test", "status": "active"}],
                "result_info": {"page": 1, "per_page": 50, "count": 1,
                                "total_count": 1, "total_pages": 1}})
    w("zones-none", cf_page([]))
    w("error-auth", {"success": False, "errors": [{"code": 10000,
                     "message": "Authentication error"}], "messages": [], "result": None})
    w("error-chain", {"success": False, "errors": [{
        "code": 1004, "message": "DNS Validation Error", "error_chain": [
            {"code": 9021, "message": "TTL must be between 60 and 86400 seconds, "
             "or 1 for Automatic."}]}], "messages": [], "result": None})
    w("error-success-true-missing", '{"errors": [], "result": []}')
    w("batch", {"success": True, "errors": [], "messages": [], "result": {
        "deletes": [cf_record("A", "192.0.2.9", ids[5])],
        "posts": [cf_record("A", "192.0.2.3", ids[1])]}})
    w("truncated", '{"success": true, "result": [{"id": "372e')
    w("duplicate-key", '{"success": true, "success": true, "result": []}')


def hz_rrset(name, rtype, ttl, values):
    return {"id": f"{name}/{rtype}", "name": name, "type": rtype, "ttl": ttl,
            "labels": {}, "protection": {"change": False}, "zone": 4711,
            "records": [{"value": v, "comment": ""} for v in values]}


def hz_action(status, error=None, aid=13):
    return {"action": {"id": aid, "command": "set_rrset_records", "status": status,
                       "progress": 100 if status != "running" else 0,
                       "started": "2026-01-01T00:00:00+00:00", "finished": None,
                       "resources": [{"id": 4711, "type": "zone"}], "error": error}}


def hetzner_seeds():
    """Hetzner Cloud API answers (Zone RRSets, Actions, Errors)."""
    w = lambda n, d: write("hetzner", n, json.dumps(d, indent=1)
                           if not isinstance(d, (str, bytes)) else d)
    meta = {"pagination": {"page": 1, "per_page": 25, "previous_page": None,
                           "next_page": None, "last_page": 1, "total_entries": 2}}
    w("rrsets", {"rrsets": [hz_rrset("app", "A", 60, ["192.0.2.1", "192.0.2.2"]),
                            hz_rrset("app", "AAAA", 300, ["2001:DB8::1"])], "meta": meta})
    w("rrsets-null-ttl", {"rrsets": [hz_rrset("app", "A", None, ["192.0.2.1"])],
                          "meta": meta})
    w("rrsets-other", {"rrsets": [hz_rrset("www", "A", 60, ["192.0.2.1"]),
                                  hz_rrset("app", "TXT", 60, ['"v=spf1 -all"'])],
                       "meta": meta})
    w("rrsets-bad-family", {"rrsets": [hz_rrset("app", "A", 60, ["2001:db8::1"])]})
    w("rrsets-cname", {"rrsets": [hz_rrset("app", "CNAME", 60, ["LB.Example.NET."])],
                       "meta": meta})
    w("rrsets-cname-two", {"rrsets": [hz_rrset("app", "CNAME", 60, ["a.example.net.",
                                                                     "b.example.net."])]})
    w("rrsets-empty", {"rrsets": [], "meta": meta})
    w("action-running", hz_action("running"))
    w("action-success", hz_action("success"))
    w("action-error", hz_action("error", {"code": "action_failed",
                                          "message": "the change failed"}))
    w("create", dict(hz_action("running"), rrset=hz_rrset("app", "A", 60, ["192.0.2.1"])))
    w("error", {"error": {"code": "invalid_input", "message": "invalid input in field "
                          "'records'", "details": {"fields": [{"name": "records",
                                                               "messages": ["is empty"]}]}}})
    w("error-locked", {"error": {"code": "locked", "message": "another action is running",
                                 "details": {}}})
    w("truncated", '{"rrsets": [{"name": "app", "ty')
    w("duplicate-key", '{"action": {"id": 1, "id": 2, "status": "success"}}')


def do_record(rid, rtype, name, data, ttl=1800):
    return {"id": rid, "type": rtype, "name": name, "data": data, "priority": None,
            "port": None, "ttl": ttl, "weight": None, "flags": None, "tag": None}


def digitalocean_seeds():
    """DigitalOcean API v2 answers (Domain Records, errors, pagination)."""
    w = lambda n, d: write("digitalocean", n, json.dumps(d, indent=1)
                           if not isinstance(d, (str, bytes)) else d)
    nxt = "https://api.digitalocean.com/v2/domains/example.test/records?page=2"
    w("records", {"domain_records": [do_record(3352892, "A", "app", "192.0.2.1", 60),
                                     do_record(3352893, "A", "app", "192.0.2.2", 60),
                                     do_record(3352894, "AAAA", "app", "2001:DB8::1")],
                  "links": {}, "meta": {"total": 3}})
    w("records-paged", {"domain_records": [do_record(1, "A", "@", "192.0.2.1")],
                        "links": {"pages": {"next": nxt, "last": nxt}}, "meta": {"total": 2}})
    w("records-other", {"domain_records": [do_record(7, "TXT", "app", "v=spf1 -all"),
                                           do_record(8, "A", "www", "198.51.100.1")],
                        "meta": {"total": 2}})
    w("records-aaaa", {"domain_records": [do_record(9, "AAAA", "app", "2001:db8::2", 30)]})
    w("records-bad-family", {"domain_records": [do_record(5, "A", "app", "2001:db8::1")]})
    # The target asks for CNAME when the length is 2 modulo 3, of "app"
    # when it is odd (5 modulo 6), of "@" when even (2 modulo 6).
    cname = json.dumps({"domain_records": [do_record(11, "CNAME", "app", "LB.Example.NET", 60),
                                           do_record(12, "CNAME", "@", "@", 60)],
                        "links": {}, "meta": {"total": 2}}, indent=1)
    w("records-cname", cname + " " * ((5 - len(cname)) % 6))
    w("records-cname-apex", cname + " " * ((2 - len(cname)) % 6))
    w("records-empty", {"domain_records": [], "links": {}, "meta": {"total": 0}})
    w("error-auth", {"id": "Unauthorized", "message": "Unable to authenticate you"})
    w("error-rate", {"id": "too_many_requests", "message": "API Rate limit exceeded."})
    w("error-notfound", {"id": "not_found", "message": "The resource you were accessing "
                         "could not be found.", "request_id": "4d9d8375-3c56"})
    w("truncated", '{"domain_records": [{"id": 1, "ty')
    w("duplicate-key", '{"domain_records": [], "domain_records": []}')


def pb_record(rid, name, rtype, content, ttl="600"):
    return {"id": str(rid), "name": name, "type": rtype, "content": content, "ttl": ttl,
            "prio": "0", "notes": ""}


def porkbun_seeds():
    """Porkbun API v3 answers (retrieveByNameType, create, errors)."""
    w = lambda n, d: write("porkbun", n, json.dumps(d, indent=1)
                           if not isinstance(d, (str, bytes)) else d)
    app = "app.example.test"
    w("records", {"status": "SUCCESS", "records": [
        pb_record(106926652, app, "A", "192.0.2.1"),
        pb_record(106926653, app, "A", "192.0.2.2", "3600")]})
    w("records-aaaa", {"status": "SUCCESS", "records": [
        pb_record(7, app, "AAAA", "2001:DB8::1")]})
    w("records-cname", {"status": "SUCCESS", "records": [
        pb_record(8, app, "CNAME", "Backup.Example.NET.")]})
    w("records-apex", {"status": "SUCCESS", "records": [
        pb_record(9, "example.test", "A", "203.0.113.9")]})
    w("records-other", {"status": "SUCCESS", "records": [
        pb_record(10, app, "TXT", "v=spf1 -all"), pb_record(11, "www.example.test", "A",
                                                           "198.51.100.1")]})
    w("records-bad-family", {"status": "SUCCESS", "records": [
        pb_record(12, app, "A", "2001:db8::1")]})
    w("records-number-ttl", {"status": "SUCCESS", "records": [
        dict(pb_record(13, app, "A", "192.0.2.3"), id=13, ttl=600)]})
    w("records-empty", {"status": "SUCCESS", "records": []})
    w("created", {"status": "SUCCESS", "id": 106926659})
    w("error-key", {"status": "ERROR", "message": "Invalid API key. (002)"})
    w("error-access", {"status": "ERROR", "message": "Domain is not opted in to API access."})
    w("error-ttl", {"status": "ERROR", "message": "TTL must be at least 600.\nsecond line"})
    w("truncated", '{"status": "SUCCESS", "records": [{"id": "1", "na')
    w("duplicate-key", '{"status": "SUCCESS", "status": "ERROR", "records": []}')


def bn_record(rid, rtype, name, value, ttl=300):
    return {"Id": rid, "Type": rtype, "Name": name, "Value": value, "Ttl": ttl,
            "Weight": 100, "Priority": 0, "Port": 0, "Disabled": False}


def webhook_seeds():
    """external-dns webhook answers: domain filters and lists of endpoints."""
    w = lambda n, d: write("webhook", n, json.dumps(d, indent=1)
                           if not isinstance(d, (str, bytes)) else d)
    w("filter", {"include": ["example.test"]})
    w("filter-exclude", {"include": [".example.test", "example.org"],
                         "exclude": ["www.example.test"]})
    w("filter-doc", {"filters": ["example.test"]})
    w("filter-regex", {"regexInclude": "^.*\\.example\\.test$"})
    ep = lambda name, t, targets, ttl=60, **kw: dict(
        {"dnsName": name, "recordType": t, "recordTTL": ttl, "targets": targets}, **kw)
    w("records", [ep("app.example.test", "A", ["192.0.2.2", "192.0.2.1"], labels={"o": "x"}),
                  ep("app.example.test", "AAAA", ["2001:DB8::1"]),
                  ep("app.example.test", "TXT", ['"v=spf1 -all"']),
                  ep("www.example.test", "A", ["198.51.100.1"], setIdentifier="v1")])
    w("records-cname", [ep("APP.example.test.", "CNAME", ["Backup.Example.NET."])])
    w("records-apex", [ep("example.test", "A", ["203.0.113.9"], 0),
                       {"dnsName": "example.test", "recordType": "AAAA", "targets": ["::1"]}])
    w("records-null", "null\n")
    w("records-twice", [ep("app.example.test", "A", []), ep("app.example.test", "A", [])])


def bunny_seeds():
    """bunny.net DNS API answers (a zone, the zone search, errors)."""
    w = lambda n, d: write("bunny", n, json.dumps(d, indent=1)
                           if not isinstance(d, (str, bytes)) else d)
    zone = lambda recs: {"Id": 48213, "Domain": "example.test", "Records": recs}
    w("zone", zone([bn_record(9001, 0, "app", "192.0.2.1"),
                    bn_record(9002, 0, "app", "192.0.2.2", 3600),
                    bn_record(9003, 3, "app", "v=spf1 -all"),
                    bn_record(9004, 0, "www", "198.51.100.1")]))
    w("zone-aaaa", zone([bn_record(7, 1, "app", "2001:DB8::1")]))
    w("zone-cname", zone([bn_record(8, 2, "app", "Backup.Example.NET.")]))
    w("zone-apex", zone([bn_record(9, 0, "", "203.0.113.9"), bn_record(10, 1, "", "::1"),
                         bn_record(11, 2, "", "apex.example.net")]))
    w("zone-bad-family", zone([bn_record(12, 0, "app", "2001:db8::1"),
                               bn_record(13, 1, "", "192.0.2.1")]))
    w("zone-string-id", zone([dict(bn_record(14, 0, "app", "192.0.2.3"), Id="14")]))
    w("zone-empty", zone([]))
    w("zone-no-domain", {"Id": 48213, "Records": []})
    w("search", {"Items": [{"Id": 48214, "Domain": "other.test"},
                           {"Id": 48213, "Domain": "Example.Test."}],
                 "CurrentPage": 1, "TotalItems": 2, "HasMoreItems": False})
    w("search-more", {"Items": [], "CurrentPage": 1, "TotalItems": 9, "HasMoreItems": True})
    w("record-added", bn_record(9005, 0, "app", "192.0.2.9", 60))
    w("error-ttl", {"ErrorKey": "validation", "Field": "Ttl",
                    "Message": "The TTL must be between 15 and 2147483647.\nsecond line"})
    w("error-denied", {"Message": "Authorization has been denied for this request."})
    w("truncated", '{"Id": 48213, "Domain": "example.test", "Records": [{"Id": 1, "Ty')
    w("duplicate-key", '{"Domain": "a.test", "Domain": "b.test", "Records": []}')


def config_seeds():
    """Real files of the project, with !file secrets made literal (the
    target's folder does not exist), and a few small ones."""
    root = os.path.dirname(HERE)
    files = [("example", os.path.join(root, "ddup.ini.example"))]
    cfgdir = os.path.join(root, "tests", "unit", "configs")
    for f in sorted(os.listdir(cfgdir)):
        if f.endswith(".ini"):
            files.append((f[:-4], os.path.join(cfgdir, f)))
    for name, path in files:
        with open(path, "rb") as f:
            text = f.read()
        text = text.replace(b"!file /etc/ddup/tsig.secret",
                            b"c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI=")
        # The target sets DDUP_FUZZ_KEY itself.
        text = text.replace(b"!env PDNS_API_KEY", b"!env DDUP_FUZZ_KEY")
        text = text.replace(b"!env CLOUDFLARE_API_TOKEN", b"!env DDUP_FUZZ_KEY")
        write("config", name + ".ini", text)
    small = {
        "rfc2136-min": """[provider dns]
type = rfc2136
server = [::1]:53
zone = example.test

[domain app.example.test]
provider = dns

[endpoint a]
url = http://[2001:db8::1]/
ip = 2001:db8::1
""",
        "powerdns-env": """interval = 1m
[provider p]
type = powerdns
baseUrl = https://pdns.example.test:8081/
apiKey = !env DDUP_FUZZ_KEY
zone = example.test

[domain example.test]
provider = p
expectStatus = 200, 204, 3xx
timeout = 250ms

[endpoint]
url = http://192.0.2.1:8080/health?x=1
ip = 192.0.2.1
""",
        "crlf-comments": "; comment\r\n# other\r\n[provider dns]\r\n"
        "type = RFC2136\r\nServer = 127.0.0.1:5353 ; inline\r\n"
        "zone = example.test.\r\n\r\n[domain a.example.test]\r\n"
        "provider = dns\r\n[endpoint x]\r\nurl = http://127.0.0.1/\r\n"
        "ip = 127.0.0.1\r\npriority = 5\r\n",
        "file-secret": """[provider dns]
type = rfc2136
server = 127.0.0.1
zone = example.test
keyName = k
keySecret = !file tsig.secret

[domain a.example.test]
provider = dns

[endpoint x]
url = http://127.0.0.1/
ip = 127.0.0.1
""",
        "empty": "",
        "binary": "\0\xff[\x01]\n=\n",
    }
    for name, text in small.items():
        write("config", name + ".ini", text.encode("latin-1"))


def exec_seeds():
    """Output of an exec provider's read, as programs print it.  The
    target asks for A on an even length, AAAA on an odd one."""
    seeds = {
        "a-one": "60 192.0.2.1\n",
        "a-two": "300 192.0.2.2\n60 192.0.2.1\n",
        "a-blanks-crlf": "  60\t192.0.2.1  \r\n120 192.0.2.9\r\n",
        "a-no-newline": "60 192.0.2.1",
        "aaaa-one": "60 2001:db8::1\n",
        "aaaa-long": "0 2001:0db8:0000:0000:0000:0000:0000:0001\n",
        "empty": "",
        "blank-line": "\n",
        "garbage": "sixty 192.0.2.1\n",
        "ttl-huge": "99999999999 192.0.2.1\n",
        "ttl-max": "2147483647 192.0.2.1\n",
        "three-words": "60 192.0.2.1 extra\n",
        "nul": "60 192.0.2.1\x00\n",
        "binary": "\xff\xfe\x1b[31m\n",
    }
    for name, text in seeds.items():
        write("exec", name, text.encode("latin-1"))


def zonefile_seeds():
    """A zonefile provider's file as ddup writes it, alone or in a zone
    made from a template, and as someone else's edit may leave it."""
    b = "; ddup-check records: begin (written by ddup-check: edits are lost)\n"
    e = "; ddup-check records: end\n"
    head = ("$ORIGIN example.test.\n$TTL 60\n"
            "@ IN SOA ns1 hostmaster 1764745000 3600 600 86400 60\n")
    seeds = {
        "block": b + "; ddup-check serial 1764745000\n"
                 "app.example.test. 60 IN A 192.0.2.1\n"
                 "app.example.test. 60 IN AAAA 2001:db8::1\n" + e,
        "two-names": b + "; ddup-check serial 7\n"
                     "api.example.test. 300 IN A 198.51.100.7\n"
                     "app.example.test. 60 IN A 192.0.2.2\n"
                     "app.example.test. 60 IN A 192.0.2.1\n" + e,
        "cname": b + "; ddup-check serial 4294967295\n"
                 "app.example.test. 60 IN CNAME lb.example.net.\n" + e,
        "template": head + "@ IN NS ns1\n" + b + "; ddup-check serial 1764745000\n"
                    "app.example.test. 60 IN A 192.0.2.1\n" + e + "; after\n",
        "template-fields": head.replace("1764745000", "{serial}") + "{records}\n{other}\n",
        "empty": "",
        "no-block": head,
        "no-end": b + "app.example.test. 60 IN A 192.0.2.1\n",
        "two-blocks": b + e + b + e,
        "mx": b + "app.example.test. 60 IN MX 10 mail.example.test.\n" + e,
        "relative": b + "app 60 IN A 192.0.2.1\n" + e,
        "mixed-case-long": b + "APP.Example.TEST.\t2147483647\tIN\tAAAA\t"
                           "2001:0DB8:0000:0000:0000:0000:0000:0001\n" + e,
        "nul": b + "app.example.test. 60 IN A 192.0.2.1\x00\n" + e,
        "binary": b + "\xff\xfe\x1b[31m\n" + e,
    }
    for name, text in seeds.items():
        write("zonefile", name, text.encode("latin-1"))


def dashboard_seeds():
    """Lines: endpoint name, location, last result, domain, provider,
    error, CNAME, controlUrl, its result, a change's domain, old and new
    set and error (fuzz_dashboard.c)."""
    seeds = {
        "plain": ["web1", "austin", "ok", "app.example.test", "bind", "",
                  "", "http://192.0.2.1/ping", "timeout", "app.example.test",
                  "192.0.2.1", "192.0.2.2", ""],
        "hostile": ['<script>alert("x")</script>', "\"><img src=x>", "</td></tr>",
                    "a&b", "p'q", "ns1: <b>REFUSED</b>", "lb.example.net.",
                    "http://c/?a=<b>&c=d", "&amp;", "&#39;", "<i>", "</table>",
                    "\x1b[2J"],
        "bytes": ["\xff\xfe", "\xe2\x80\xae", "\xc0\xaf", "\r", "\x7f",
                  "\xc2\x85", "\xe2\x80\xa8", "\xed\xa0\x80", "", "", "", "", ""],
    }
    for name, fields in seeds.items():
        write("dashboard", name, "\n".join(fields).encode("latin-1"))


def desec_seeds():
    def rrset(t, records, ttl=3600, sub="app"):
        return {"created": "2026-01-01T00:00:00.000000Z", "domain": "example.test",
                "subname": sub, "name": sub + ".example.test.", "type": t,
                "records": records, "ttl": ttl, "touched": "2026-01-01T00:00:00.000000Z"}
    seeds = {
        "both": [rrset("A", ["192.0.2.1", "192.0.2.2"]), rrset("AAAA", ["2001:db8::1"]),
                 rrset("MX", ["10 mx.example.test."])],
        "a": [rrset("A", ["192.0.2.1"], ttl=60)],
        "cname": [rrset("CNAME", ["Backup.Example.NET."]), rrset("TXT", ['"x"'], sub="www")],
        "cname-two": [rrset("CNAME", ["a.example.net.", "b.example.net."])],
        "empty": [],
        "wrong-family": [rrset("A", ["2001:db8::1"])],
        "ttl-string": [rrset("AAAA", ["2001:db8::1"], ttl="3600")],
        "twice": [rrset("A", ["192.0.2.1"]), rrset("A", ["192.0.2.2"])],
        "no-records": [rrset("A", [])],
        "object": {"detail": "Not found."},
        "throttled": {"detail": "Request was throttled. Expected available in 7 seconds."},
        "invalid": {"ttl": ["Ensure this value is greater than or equal to 3600."]},
        "bulk-invalid": [{}, {"records": ["Record content for type A malformed: x"]}],
        "non-field": {"non_field_errors": ["Same subname and type as in another RRset."]},
    }
    for name, doc in seeds.items():
        write("desec", name, json.dumps(doc))
    write("desec", "html", "<html><body>502 Bad Gateway</body></html>")


def gandi_seeds():
    def rrset(t, values, ttl=300, name="app"):
        return {"rrset_name": name, "rrset_type": t, "rrset_ttl": ttl, "rrset_values": values,
                "rrset_href": "https://api.gandi.net/v5/livedns/domains/example.test/records/"
                              + name + "/" + t}
    seeds = {
        "both": [rrset("A", ["192.0.2.1", "192.0.2.2"]), rrset("AAAA", ["2001:db8::1"]),
                 rrset("TXT", ['"v=spf1 -all"'])],
        "a": [rrset("A", ["192.0.2.1"], ttl=10800)],
        "cname": [rrset("CNAME", ["Backup.Example.NET."]), rrset("TXT", ['"x"'], name="www")],
        "cname-relative": [rrset("CNAME", ["backup"])],
        "empty": [],
        "wrong-family": [rrset("A", ["2001:db8::1"])],
        "ttl-null": [rrset("AAAA", ["2001:db8::1"], ttl=None)],
        "twice": [rrset("A", ["192.0.2.1"]), rrset("A", ["192.0.2.2"])],
        "no-values": [rrset("A", [])],
        "created": {"message": "DNS Record Created"},
        "unauthorized": {"code": 401, "message": "The server could not verify that you "
                         "authorized to access the document you requested.",
                         "object": "HTTPUnauthorized", "cause": "Unauthorized"},
        "invalid": {"code": 400, "message": "Validation error", "object": "HTTPBadRequest",
                    "cause": "Bad Request", "errors": [{"location": "body", "name": "rrset_ttl",
                                                        "description": "Must be at least 300."}]},
        "notfound": {"code": 404, "message": "Can't find the DNS record.",
                     "object": "dns-record", "cause": "Not Found"},
    }
    for name, doc in seeds.items():
        write("gandi", name, json.dumps(doc))
    write("gandi", "html", "<html><body>502 Bad Gateway</body></html>")


R53_NS = "https://route53.amazonaws.com/doc/2013-04-01/"


def r53_set(name, rtype, ttl, values, extra=""):
    recs = "".join(f"<ResourceRecord><Value>{v}</Value></ResourceRecord>" for v in values)
    return (f"<ResourceRecordSet><Name>{name}</Name><Type>{rtype}</Type>{extra}"
            f"<TTL>{ttl}</TTL><ResourceRecords>{recs}</ResourceRecords></ResourceRecordSet>")


def r53_list(sets, truncated=False, nxt=""):
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<ListResourceRecordSetsResponse '
            f'xmlns="{R53_NS}"><ResourceRecordSets>{"".join(sets)}</ResourceRecordSets>'
            f'<IsTruncated>{"true" if truncated else "false"}</IsTruncated>'
            f'<MaxItems>100</MaxItems>{nxt}</ListResourceRecordSetsResponse>')


def route53_seeds():
    write("route53", "list-a-aaaa", r53_list([
        r53_set(NAME, "A", 60, ["192.0.2.1", "192.0.2.2"]),
        r53_set(NAME, "AAAA", 300, ["2001:db8::1", "2001:DB8:0::a"]),
        r53_set(NAME, "TXT", 300, ['"v=spf1 -all"']),
        r53_set("www." + NAME, "A", 60, ["192.0.2.9"])]))
    write("route53", "list-empty", r53_list([]))
    write("route53", "list-other-name", r53_list([r53_set("b." + ZONE, "A", 60, ["192.0.2.3"])]))
    write("route53", "list-truncated", r53_list(
        [r53_set(NAME, "A", 60, ["192.0.2.1"])], True,
        f"<NextRecordName>{NAME}</NextRecordName><NextRecordType>AAAA</NextRecordType>"))
    write("route53", "list-weighted", r53_list(
        [r53_set(NAME, "A", 60, ["192.0.2.1"], "<SetIdentifier>blue</SetIdentifier>"
                 "<Weight>10</Weight>")], True,
        f"<NextRecordName>{NAME}</NextRecordName><NextRecordType>A</NextRecordType>"
        "<NextRecordIdentifier>green</NextRecordIdentifier>"))
    write("route53", "list-alias", r53_list([
        f"<ResourceRecordSet><Name>{NAME}</Name><Type>A</Type><AliasTarget><HostedZoneId>"
        "Z2FDTNDATAQYW2</HostedZoneId><DNSName>d1.cloudfront.net.</DNSName>"
        "<EvaluateTargetHealth>false</EvaluateTargetHealth></AliasTarget></ResourceRecordSet>"]))
    write("route53", "list-bad-family", r53_list([r53_set(NAME, "A", 60, ["2001:db8::1"])]))
    write("route53", "list-ttl-big", r53_list([r53_set(NAME, "A", 2147483648, ["192.0.2.1"])]))
    write("route53", "list-entities", r53_list([r53_set(NAME, "AAAA", 60,
                                                        ["2001:db8::1&amp;&lt;x&gt;"])]))
    write("route53", "list-doctype", '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "b">]>'
          '<ListResourceRecordSetsResponse>&a;</ListResourceRecordSetsResponse>')
    write("route53", "change", f'<?xml version="1.0" encoding="UTF-8"?>\n'
          f'<ChangeResourceRecordSetsResponse xmlns="{R53_NS}"><ChangeInfo><Id>/change/'
          'C2682N5HXP0BZ4</Id><Status>PENDING</Status><SubmittedAt>2026-12-01T14:00:00.000Z'
          '</SubmittedAt><Comment>ddup-check</Comment></ChangeInfo>'
          '</ChangeResourceRecordSetsResponse>')
    write("route53", "error-throttling", f'<?xml version="1.0"?>\n<ErrorResponse '
          f'xmlns="{R53_NS}"><Error><Type>Sender</Type><Code>Throttling</Code><Message>'
          'Rate exceeded</Message></Error><RequestId>a1b2</RequestId></ErrorResponse>')
    write("route53", "error-signature", f'<?xml version="1.0"?>\n<ErrorResponse '
          f'xmlns="{R53_NS}"><Error><Type>Sender</Type><Code>SignatureDoesNotMatch</Code>'
          '<Message>The request signature we calculated does not match</Message></Error>'
          '<RequestId>a1b2</RequestId></ErrorResponse>')
    write("route53", "error-batch", f'<?xml version="1.0"?>\n<InvalidChangeBatch '
          f'xmlns="{R53_NS}"><Messages><Message>Tried to delete resource record set '
          "[name='app.example.test.', type='AAAA'] but it was not found</Message><Message>"
          "second\x1b[31m</Message></Messages><RequestId>a1b2</RequestId>"
          "</InvalidChangeBatch>")


def progline_seeds():
    """A check program's stdout (and, read as a command, its words)."""
    for i, v in enumerate([
            "TCP OK - 0.001 second response time on 127.0.0.1 port 25|time=0.000996s;;;0.0\n",
            "HTTP WARNING: HTTP/1.1 404 Not Found - 312 bytes in 0.001 second | size=312B\n",
            "DNS CRITICAL - '/usr/bin/nslookup' returned an error\nsecond line\n",
            "  \t padded \r\n", "\nfirst line empty", "|perfdata only",
            "caf\u00e9 \u202e bidi \x1b[31m red\x00nul", "x" * 300 + "\n",
            "\u00e9" * 150,
            "/usr/lib/nagios/plugins/check_tcp -H {ip} -p 25 -u https://{host}/{name}?{domain}",
            "/bin/c {ip}{ip} {i{ip}p} {nam {host", "relative {ip}", ""]):
        write("progline", "%02d" % i, v)


def stream_seeds():
    """`expect` and a stream: the text's length, a seed for the cuts, the text,
    then what the server sends (fuzz/fuzz_stream.c)."""
    def seed(text, cuts, stream):
        return bytes([len(text), cuts]) + text + stream
    write("stream", "smtp", seed(b"220 ", 7, b"220 mail.example.test ESMTP Postfix\r\n"))
    write("stream", "redis", seed(b"+PONG", 1, b"+PONG\r\n"))
    write("stream", "nul", seed(b"OK", 3, b"\0\0O\0K\0OOK"))
    write("stream", "kmp", seed(b"abacabab", 9, b"abacabacabab"))
    write("stream", "last", seed(b"END", 5, b"." * 4093 + b"END"))
    write("stream", "late", seed(b"END", 5, b"." * 4094 + b"END"))
    write("stream", "empty", seed(b"", 0, b"x"))


def main():
    progline_seeds()
    stream_seeds()
    gandi_seeds()
    desec_seeds()
    dashboard_seeds()
    route53_seeds()
    exec_seeds()
    zonefile_seeds()
    config_seeds()
    text_seeds()
    dns_seeds()
    powerdns_seeds()
    azure_seeds()
    ovh_seeds()
    cloudflare_seeds()
    hetzner_seeds()
    digitalocean_seeds()
    porkbun_seeds()
    bunny_seeds()
    webhook_seeds()
    return 0


if __name__ == "__main__":
    sys.exit(main())
