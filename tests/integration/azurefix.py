"""A fake of Azure DNS for the azure provider: the Microsoft identity
platform's token endpoint and the Azure Resource Manager record-set
API, written from Microsoft's documentation:

- token: POST {authority}/{tenant}/oauth2/v2.0/token, form-encoded
  grant_type=client_credentials, client_id, client_secret, scope
  (https://management.azure.com/.default); answers {"token_type":
  "Bearer", "expires_in", "ext_expires_in", "access_token"}; errors
  {"error", "error_description", "error_codes", ...} (400 invalid_request
  for an unknown tenant, 400 unauthorized_client for an unknown client,
  401 invalid_client for a wrong secret).
  https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-client-creds-grant-flow
- record sets: {GET,PUT,DELETE} /subscriptions/{sub}/resourceGroups/{rg}
  /providers/Microsoft.Network/dnsZones/{zone}/{A|AAAA|CNAME}/{relative
  name}?api-version=2018-05-01, `Authorization: Bearer`; PUT takes
  {"properties": {"TTL", "ARecords": [{"ipv4Address"}] | "AAAARecords":
  [{"ipv6Address"}] | "CNAMERecord": {"cname"}, "metadata"?}} (a CNAME
  that is no domain name: 400 BadRequest "The domain name '...' is
  invalid."), If-Match (the etag: 412 when it is
  not the current one) and If-None-Match: * (412 when the set exists),
  answers 200 (updated) or 201 (created) with the record set and a new
  etag; DELETE answers 200, or 204 when there was nothing; GET of a
  missing set 404 {"code": "NotFound", ...}; ARM errors {"error":
  {"code", "message"}} (401 AuthenticationFailed /
  InvalidAuthenticationToken, 403 AuthorizationFailed, 400
  MissingApiVersionParameter / InvalidApiVersionParameter, 404
  ResourceGroupNotFound / ParentResourceNotFound, 429 with Retry-After).
  https://learn.microsoft.com/en-us/rest/api/dns/record-sets
- a CNAME record set beside any other record set of its name, or any
  record set beside a CNAME one, is refused 409 {"code": "Conflict",
  "message": "The CNAME record could not be created because another
  record with the same name already exists in this zone."} (as Azure
  answers it; the apex always holds NS and SOA, so no CNAME there).
  https://learn.microsoft.com/en-us/azure/dns/dns-zones-records#cname-records
- answers as dns.json (Azure's Swagger document, azure/README.md) has
  them: `metadata` absent rather than null; the `azure` fixture puts
  the fake behind Prism, which checks every request and answer of the
  record-set API against that document (the token endpoint is not in
  it: authorityUrl goes to the fake directly).

Path segments of ARM are case-insensitive; the fake matches them so.
State: records[(type, relative name)] = {"ttl", "addrs" (a CNAME: its
one target), "etag", "metadata"}, other types (TXT...) put there only by
set_records() for the conflicts; history: (name, its types) after each
write; `role` is "contributor" (default) or "reader" (writes are
refused with 403, as for a principal without DNS Zone Contributor).
"""

import ipaddress
import os
import re
import secrets
import urllib.parse
import uuid

from apifix import ApiFake, fake_fixture
from prismfix import prism_fixture

__all__ = ["AzureFake", "azure_fake", "azure", "_azure_prism_session", "API_VERSION",
           "AZURE_SCHEMA"]

HERE = os.path.dirname(os.path.abspath(__file__))
# Azure's own description of the record-set operations (azure/README.md).
AZURE_SCHEMA = os.path.join(HERE, "azure", "dns.json")

API_VERSION = "2018-05-01"
SCOPE = "https://management.azure.com/.default"
_KIND = {"A": ("ARecords", "ipv4Address", 4), "AAAA": ("AAAARecords", "ipv6Address", 6),
         "CNAME": ("CNAMERecord", "cname", None)}
# What Azure keeps at a zone's apex, beside which no CNAME can be.
_APEX_TYPES = {"NS", "SOA"}
_LABEL = re.compile(r"^[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?$")


def _domain_ok(name):
    name = name[:-1] if name.endswith(".") else name
    return 0 < len(name) <= 253 and all(_LABEL.match(p) for p in name.split("."))


def _arm_error(status, code, message):
    return status, {}, {"error": {"code": code, "message": message}}


class AzureFake(ApiFake):
    name = "Azure"

    def __init__(self, zone="example.test", subscription="00000000-1111-2222-3333-444444444444",
                 group="dns-rg", tenant="tenant-0001", client_id="client-0001",
                 client_secret=None):
        self.zone = zone
        self.subscription = subscription
        self.group = group
        self.tenant = tenant
        self.client_id = client_id
        self.client_secret = client_secret or "cs~" + secrets.token_urlsafe(24)
        self.tokens = set()             # access tokens issued and still good
        self.issued = []                # every token handed out, for secret searches
        self.role = "contributor"
        self.records = {}
        self.history = []               # (name, sorted types) after each write
        super().__init__()

    # ------------------------------------------------------------ state

    def set_records(self, rtype, name, addrs, ttl=3600, metadata=None):
        """Puts a record set in place as another tool would have."""
        with self.lock:
            self.records[(rtype, name.lower())] = {
                "ttl": ttl, "addrs": list(addrs), "etag": str(uuid.uuid4()),
                "metadata": metadata}

    def set_cname(self, name, target, ttl=3600):
        self.set_records("CNAME", name, [target], ttl=ttl)

    def get(self, rtype, name):
        """(ttl, sorted addresses) or, for a CNAME, (ttl, target); None
        when there is no record set."""
        with self.lock:
            r = self.records.get((rtype, name.lower()))
            if r is None:
                return None
            if rtype == "CNAME":
                return r["ttl"], r["addrs"][0]
            return r["ttl"], sorted(r["addrs"], key=ipaddress.ip_address)

    def types_at(self, name):
        with self.lock:
            return sorted(t for t, n in self.records if n == name.lower())

    def revoke_tokens(self):
        with self.lock:
            self.tokens.clear()

    def is_write(self, req):
        return "/oauth2/" not in req.path

    def token_calls(self):
        return self.count("POST", "/oauth2/v2.0/token")

    def error_doc(self, status):
        codes = {401: "InvalidAuthenticationToken", 403: "AuthorizationFailed",
                 404: "NotFound", 429: "TooManyRequests", 500: "InternalServerError",
                 503: "ServiceUnavailable"}
        return {"error": {"code": codes.get(status, "BadRequest"),
                          "message": f"injected {status}"}}

    # ------------------------------------------------------------ routes

    def route(self, req):
        if req.path.endswith("/oauth2/v2.0/token"):
            return self._token(req)
        if req.path.lower().startswith("/subscriptions/"):
            return self._arm(req)
        return _arm_error(404, "NotFound", f"no route {req.path}")

    def _token(self, req):
        def err(status, code, desc, n):
            return status, {}, {"error": code, "error_description": f"AADSTS{n}: {desc}",
                                "error_codes": [n], "timestamp": "2026-01-01 00:00:00Z",
                                "trace_id": str(uuid.uuid4()),
                                "correlation_id": str(uuid.uuid4())}

        if req.method != "POST":
            return err(405, "invalid_request", "The request must be a POST.", 900561)
        tenant = req.path.split("/")[1]
        if tenant != self.tenant:
            return err(400, "invalid_request", f"Tenant '{tenant}' not found.", 90002)
        if req.media_type() != "application/x-www-form-urlencoded":
            return err(400, "invalid_request", "The request body must be form-encoded.", 900144)
        try:
            form = urllib.parse.parse_qs(req.body.decode("ascii"), keep_blank_values=True,
                                         strict_parsing=True)
        except (UnicodeDecodeError, ValueError):
            return err(400, "invalid_request", "The request body is not form-encoded.", 900144)
        if any(len(v) != 1 for v in form.values()):
            return err(400, "invalid_request", "A parameter is given twice.", 90014)
        f = {k: v[0] for k, v in form.items()}
        if f.get("grant_type") != "client_credentials":
            return err(400, "unsupported_grant_type", "grant_type must be client_credentials",
                       70003)
        if f.get("scope") != SCOPE:
            return err(400, "invalid_scope", f"The scope '{f.get('scope')}' is not valid.",
                       1002012)
        if f.get("client_id") != self.client_id:
            return err(400, "unauthorized_client",
                       f"Application with identifier '{f.get('client_id')}' was not found "
                       "in the directory.", 700016)
        if "client_secret" not in f:
            return err(401, "invalid_client", "The request body must contain "
                       "'client_assertion' or 'client_secret'.", 7000218)
        if f["client_secret"] != self.client_secret:
            return err(401, "invalid_client", "Invalid client secret provided.", 7000215)
        tok = "eyJ0eXAiOiJKV1Qi." + secrets.token_urlsafe(32)
        self.tokens.add(tok)
        self.issued.append(tok)
        return 200, {}, {"token_type": "Bearer", "expires_in": 3599, "ext_expires_in": 3599,
                         "access_token": tok}

    def _arm(self, req):
        auth = req.header("Authorization")
        if auth is None:
            return 401, {"WWW-Authenticate": 'Bearer authorization_uri="x", error="invalid_token"'}, \
                {"error": {"code": "AuthenticationFailed",
                           "message": "Authentication failed. The 'Authorization' header "
                           "is missing."}}
        if not auth.startswith("Bearer ") or auth[7:] not in self.tokens:
            return 401, {"WWW-Authenticate": 'Bearer error="invalid_token"'}, \
                {"error": {"code": "InvalidAuthenticationToken",
                           "message": "The access token is invalid."}}
        ver = req.query.get("api-version")
        if not ver:
            return _arm_error(400, "MissingApiVersionParameter", "The api-version query "
                              "parameter (?api-version=) is required for all requests.")
        if ver != [API_VERSION]:
            return _arm_error(400, "InvalidApiVersionParameter",
                              f"The api-version '{ver[0]}' is invalid.")
        parts = [urllib.parse.unquote(p) for p in req.path.split("/")[1:]]
        # subscriptions/S/resourceGroups/G/providers/Microsoft.Network/dnsZones/Z/T/N
        if len(parts) != 10 or [p.lower() for p in (parts[0], parts[2], parts[4], parts[5],
                                                    parts[6])] != \
                ["subscriptions", "resourcegroups", "providers", "microsoft.network", "dnszones"]:
            return _arm_error(400, "InvalidResourceType", f"no such resource: {req.path}")
        sub, group, zone, rtype, name = parts[1], parts[3], parts[7], parts[8], parts[9]
        if sub != self.subscription:
            return _arm_error(404, "SubscriptionNotFound",
                              f"The subscription '{sub}' could not be found.")
        if group.lower() != self.group.lower():
            return _arm_error(404, "ResourceGroupNotFound",
                              f"Resource group '{group}' could not be found.")
        if zone.lower() != self.zone.lower():
            return _arm_error(404, "ParentResourceNotFound", "Can not perform requested "
                              f"operation on nested resource. Parent resource '{zone}' not found.")
        if rtype not in _KIND:
            return _arm_error(400, "BadRequest", f"record type {rtype} is not handled here")
        if name == "" or name != name.strip() or name.endswith("."):
            return _arm_error(400, "BadRequest", f"bad record set name '{name}'")
        if req.method != "GET" and self.role != "contributor":
            return _arm_error(403, "AuthorizationFailed",
                              "The client does not have authorization to perform action "
                              "'Microsoft.Network/dnszones/" + rtype + "/write'.")
        key = (rtype, name.lower())
        cur = self.records.get(key)
        if req.method == "GET":
            if cur is None:
                return 404, {}, {"code": "NotFound", "message": f"The resource record '{name}' "
                                 f"does not exist in resource group '{group}' of subscription "
                                 f"'{sub}'."}
            return 200, {}, self._doc(sub, group, zone, rtype, name, cur)
        pre = self._preconditions(req, cur)
        if pre is not None:
            return pre
        if req.method == "DELETE":
            if cur is None:
                return 204, {}, b""
            del self.records[key]
            self.history.append((key[1], self.types_at(key[1])))
            return 200, {}, b""
        if req.method == "PUT":
            return self._put(req, sub, group, zone, rtype, name, key, cur)
        return _arm_error(405, "MethodNotAllowed", f"{req.method} is not handled here")

    def _preconditions(self, req, cur):
        im, inm = req.header("If-Match"), req.header("If-None-Match")
        if im is not None and (cur is None or (im != "*" and im != cur["etag"])):
            return _arm_error(412, "PreconditionFailed", f"The condition '{im}' in the "
                              "If-Match header was not satisfied.")
        if inm is not None and inm.strip() == "*" and cur is not None:
            return _arm_error(412, "PreconditionFailed", "The record set exists: the "
                              "condition '*' in the If-None-Match header was not satisfied.")
        return None

    def _put(self, req, sub, group, zone, rtype, name, key, cur):
        doc, bad = req.json_body()
        if bad == "media type":
            return 415, {}, {"error": {"code": "UnsupportedMediaType", "message":
                                       f"The content media type '{req.media_type()}' is not "
                                       "supported. Only 'application/json' is supported."}}
        if bad is not None:
            return _arm_error(400, "InvalidRequestContent", "The request content was invalid "
                              "and could not be deserialized.")
        field, addrkey, fam = _KIND[rtype]
        others = {t for t, n in self.records if n == key[1] and t != rtype}
        if name == "@":
            others |= _APEX_TYPES
        if rtype == "CNAME" and others:
            return 409, {}, {"code": "Conflict", "message": "The CNAME record could not be "
                             "created because another record with the same name already "
                             "exists in this zone."}
        if "CNAME" in others:
            return 409, {}, {"code": "Conflict", "message": "The record could not be created "
                             "because a CNAME record with the same name already exists in "
                             "this zone."}
        props = doc.get("properties") if isinstance(doc, dict) else None
        if not isinstance(props, dict) or set(doc) - {"properties", "etag"}:
            return _arm_error(400, "InvalidRequestContent", "properties is missing")
        bad = set(props) - {"TTL", field, "metadata", "targetResource"}
        if bad:
            return _arm_error(400, "BadRequest", f"properties not allowed in a {rtype} record "
                              f"set: {sorted(bad)}")
        ttl = props.get("TTL")
        if type(ttl) is not int or not 0 <= ttl <= 2147483647:
            return _arm_error(400, "BadRequest", "TTL must be an integer from 0 to 2147483647")
        if rtype == "CNAME":
            return self._put_cname(sub, group, zone, name, key, cur, props)
        recs = props.get(field, [])
        if not isinstance(recs, list):
            return _arm_error(400, "BadRequest", f"{field} must be an array")
        addrs = []
        for r in recs:
            if not isinstance(r, dict) or set(r) != {addrkey} or not isinstance(r[addrkey], str):
                return _arm_error(400, "BadRequest", f"each of {field} is {{\"{addrkey}\": ...}}")
            try:
                a = ipaddress.ip_address(r[addrkey])
            except ValueError:
                return _arm_error(400, "BadRequest", f"'{r[addrkey]}' is not a valid address")
            if a.version != fam:
                return _arm_error(400, "BadRequest", f"'{r[addrkey]}' is not an IPv{fam} address")
            addrs.append(str(a))
        if len(set(addrs)) != len(addrs):
            return _arm_error(400, "BadRequest", "duplicate record in the record set")
        return self._store(sub, group, zone, rtype, name, key, cur, props, addrs)

    def _put_cname(self, sub, group, zone, name, key, cur, props):
        rec = props.get("CNAMERecord")
        if not isinstance(rec, dict) or set(rec) != {"cname"} or \
                not isinstance(rec["cname"], str):
            return _arm_error(400, "BadRequest", "CNAMERecord is {\"cname\": ...}")
        if not _domain_ok(rec["cname"]):
            return 400, {}, {"code": "BadRequest",
                             "message": f"The domain name '{rec['cname']}' is invalid."}
        return self._store(sub, group, zone, "CNAME", name, key, cur, props, [rec["cname"]])

    def _store(self, sub, group, zone, rtype, name, key, cur, props, addrs):
        new = {"ttl": props["TTL"], "addrs": addrs, "etag": str(uuid.uuid4()),
               "metadata": props.get("metadata")}
        self.records[key] = new
        self.history.append((key[1], self.types_at(key[1])))
        return (201 if cur is None else 200), {}, self._doc(sub, group, zone, rtype, name, new)

    def _doc(self, sub, group, zone, rtype, name, r):
        field, addrkey, _ = _KIND[rtype]
        fqdn = (zone if name == "@" else f"{name}.{zone}") + "."
        recs = {addrkey: r["addrs"][0]} if rtype == "CNAME" else \
            [{addrkey: a} for a in r["addrs"]]
        props = {"TTL": r["ttl"], "fqdn": fqdn, "provisioningState": "Succeeded",
                 "targetResource": {}, field: recs}
        # metadata is an object of strings (dns.json): absent, not null, when none.
        if r["metadata"] is not None:
            props["metadata"] = r["metadata"]
        return {
            "id": f"/subscriptions/{sub}/resourceGroups/{group}/providers/Microsoft.Network/"
                  f"dnszones/{zone}/{rtype}/{name}",
            "name": name, "type": f"Microsoft.Network/dnszones/{rtype}", "etag": r["etag"],
            "properties": props}


azure_fake = fake_fixture(AzureFake, "azure_fake")
# The fake behind Prism: `azure.url` for baseUrl (the record sets), the
# fake's own URL for authorityUrl (the token endpoint is not in dns.json).
_azure_prism_session, azure = prism_fixture("azure_fake", AZURE_SCHEMA, "azure", vendor="Azure")
