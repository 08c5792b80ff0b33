"""A fake of the Amazon Route 53 API for the route53 provider, written
from AWS's API reference (2013-04-01):

- every request is signed with Signature Version 4 (service route53,
  region us-east-1): the fake recomputes the signature with botocore's
  own signer from the headers the request says it signed and answers
  403 SignatureDoesNotMatch when it differs, 403 InvalidClientTokenId
  for an unknown access key or a wrong or missing X-Amz-Security-Token
  (which must be among the signed headers), 403
  MissingAuthenticationToken without Authorization, 403
  SignatureDoesNotMatch "Signature expired" for an X-Amz-Date more than
  five minutes off; host and x-amz-date must be signed.
  https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html
- GET /2013-04-01/hostedzone/{Id}/rrset?name=&type=&identifier=&maxitems=
  (ListResourceRecordSets): the sets from (name, type) on, sorted by
  name with its labels reversed, then type; IsTruncated, MaxItems,
  NextRecordName, NextRecordType (NextRecordIdentifier for a set with a
  SetIdentifier).  type without name, an unknown type, a maxitems that is
  not 1..300 or an unknown parameter: 400 InvalidInput.
  https://docs.aws.amazon.com/Route53/latest/APIReference/API_ListResourceRecordSets.html
- POST /2013-04-01/hostedzone/{Id}/rrset/ (ChangeResourceRecordSets): a
  ChangeResourceRecordSetsRequest in the 2013-04-01 namespace, each
  Change an Action (CREATE, DELETE, UPSERT) and a ResourceRecordSet
  (Name, Type, TTL, ResourceRecords/ResourceRecord/Value, in that
  order); a malformed document is 400 InvalidInput; a batch that cannot
  be applied whole (a DELETE whose TTL or values are not exactly the
  current ones, of a set that is not there, a CREATE of one that is,
  two changes of one set, an address that is not one, a CNAME that is
  not one host name, a name outside the zone, an end state with a CNAME
  beside other records of its name) is 400 InvalidChangeBatch and
  changes nothing.  The batch is validated and applied whole, so its end
  state is what counts, not the order of its changes.  A CNAME's value
  is kept and listed as it was written (with its trailing dot or
  without: Route 53 does not add one).  Answers ChangeInfo {Id, Status
  PENDING, SubmittedAt}.
  https://docs.aws.amazon.com/Route53/latest/APIReference/API_ChangeResourceRecordSets.html
- an unknown hosted zone: 404 NoSuchHostedZone.  Errors are
  <ErrorResponse><Error><Type/><Code/><Message/></Error><RequestId/>
  as text/xml; Throttling and PriorRequestNotComplete are 400s.

State: records[(name, type)] = {"ttl", "values", "alias", "set_id"},
names absolute and lower case.  `page_size` caps maxitems, so a test
can make a name's sets span pages.  `history` holds, after each applied
batch, the (name, type) of every set: the zone's states one by one, as
a resolver could see them.
"""

import datetime
import hmac
import ipaddress
import re
import secrets
import uuid
import xml.etree.ElementTree as ET

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from apifix import ApiFake, fake_fixture

__all__ = ["Route53Fake", "route53_fake", "R53_NS"]

R53_NS = "https://route53.amazonaws.com/doc/2013-04-01/"
_TYPES = ("A", "AAAA", "CAA", "CNAME", "DS", "MX", "NAPTR", "NS", "PTR", "SOA", "SPF",
          "SRV", "TXT")
_AUTH = re.compile(r"AWS4-HMAC-SHA256 Credential=([^/,\s]+)/(\d{8})/([^/]+)/([^/]+)/"
                   r"aws4_request,\s*SignedHeaders=([a-z0-9\-;]+),\s*Signature=([0-9a-f]{64})$")
_SKEW = datetime.timedelta(minutes=5)


def _xml(tag, *children):
    el = ET.Element(tag)
    for c in children:
        el.append(c)
    return el


def _text(tag, text):
    el = ET.Element(tag)
    el.text = str(text)
    return el


def _doc(root):
    root.set("xmlns", R53_NS)
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root)


def error_xml(code, message, kind="Sender"):
    return _doc(_xml("ErrorResponse", _xml("Error", _text("Type", kind), _text("Code", code),
                                           _text("Message", message)),
                     _text("RequestId", uuid.uuid4())))


def _error(status, code, message, kind="Sender"):
    return status, {"Content-Type": "text/xml"}, error_xml(code, message, kind)


def _batch_error(messages):
    root = _xml("InvalidChangeBatch", _xml("Messages", *[_text("Message", m) for m in messages]),
                _text("RequestId", uuid.uuid4()))
    return 400, {"Content-Type": "text/xml"}, _doc(root)


def _sort_key(name, rtype, set_id=""):
    return (list(reversed(name.rstrip(".").split("."))), rtype, set_id or "")


class Route53Fake(ApiFake):
    name = "Route 53"

    def __init__(self, zone="example.test", zone_id="Z0123456789ABCDEFGHIJ", region="us-east-1",
                 token=None):
        self.zone = zone.lower().rstrip(".") + "."
        self.zone_id = zone_id
        self.region = region
        self.access_key = "AKIA" + secrets.token_hex(8).upper()
        self.secret_key = secrets.token_urlsafe(30)
        self.token = token               # a session token the key needs, or None
        self.records = {}
        self.page_size = None
        self.changes = []                # change batches applied, as lists of (action, name, type)
        self.history = []                # after each batch: sorted [(name, type)]
        self.bad_signatures = 0
        self.last_canonical = None
        super().__init__()
        self.set(self.zone, "NS", ["ns-1.awsdns-00.com.", "ns-2.awsdns-00.net."], ttl=172800)
        self.set(self.zone, "SOA", ["ns-1.awsdns-00.com. awsdns-hostmaster.amazon.com. "
                                    "1 7200 900 1209600 86400"], ttl=900)

    # ------------------------------------------------------------ state

    def set(self, name, rtype, values, ttl=300, alias=None, set_id=None):
        """Puts a record set in place as another tool would have."""
        with self.lock:
            self.records[(self._abs(name), rtype, set_id or "")] = {
                "ttl": ttl, "values": list(values), "alias": alias, "set_id": set_id}

    def get(self, name, rtype):
        """(ttl, sorted values) of a simple set, or None."""
        with self.lock:
            r = self.records.get((self._abs(name), rtype, ""))
            if r is None:
                return None
            if rtype in ("A", "AAAA"):
                return r["ttl"], sorted(r["values"], key=ipaddress.ip_address)
            return r["ttl"], sorted(r["values"])

    def answer(self, name, rtype):
        """[(type, value)] as dig would show the zone's answer for name,
        rtype: a CNAME answers a query of any type."""
        with self.lock:
            name = self._abs(name)
            cname = self.records.get((name, "CNAME", ""))
            if cname is not None:
                return [("CNAME", v) for v in cname["values"]]
            r = self.records.get((name, rtype, ""))
            return sorted((rtype, v) for v in r["values"]) if r is not None else []

    def types_seen(self, name):
        """The types name held after each applied batch."""
        name = self._abs(name)
        with self.lock:
            return [sorted(t for n, t in state if n == name) for state in self.history]

    def throttle(self, times=1, code="Throttling", message="Rate exceeded", method=None):
        self.fail(400, times=times, method=method, body=error_xml(code, message))

    def _abs(self, name):
        name = name.lower()
        if not name.endswith("."):
            name += "."
        if name == "@.":
            name = self.zone
        elif not name.endswith("." + self.zone) and name != self.zone:
            name = name + self.zone
        return name

    def is_write(self, req):
        return req.method == "POST"

    def error_doc(self, status):
        codes = {400: "InvalidInput", 403: "AccessDenied", 404: "NoSuchHostedZone",
                 500: "InternalFailure", 503: "ServiceUnavailable"}
        return error_xml(codes.get(status, "InternalFailure"), f"injected {status}",
                         "Receiver" if status >= 500 else "Sender")

    def failure_answer(self, req, f):
        status, headers, body = super().failure_answer(req, f)
        if isinstance(body, bytes) and body.startswith(b"<?xml"):
            headers["Content-Type"] = "text/xml"
        return status, headers, body

    # ------------------------------------------------------------ signature

    def _authenticate(self, req):
        auth = req.header("Authorization")
        if auth is None:
            return _error(403, "MissingAuthenticationToken", "Missing Authentication Token")
        m = _AUTH.match(auth)
        if m is None:
            return _error(403, "IncompleteSignature", "Authorization header requires "
                          "'Credential', 'SignedHeaders' and 'Signature'.")
        akid, day, region, service, signed, signature = m.groups()
        if akid != self.access_key:
            return _error(403, "InvalidClientTokenId", "The security token included in the "
                          "request is invalid.")
        amz_date = req.header("X-Amz-Date") or ""
        try:
            when = datetime.datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ")
        except ValueError:
            return _error(403, "IncompleteSignature", "X-Amz-Date is missing or malformed.")
        if abs(datetime.datetime.utcnow() - when) > _SKEW:
            return _error(403, "SignatureDoesNotMatch", "Signature expired: "
                          f"{amz_date} is now earlier or later than the server's time.")
        names = signed.split(";")
        if "host" not in names or "x-amz-date" not in names or names != sorted(names):
            return _error(403, "SignatureDoesNotMatch", "host and x-amz-date must be signed, "
                          "sorted.")
        if day != amz_date[:8] or region != self.region or service != "route53":
            return _error(403, "SignatureDoesNotMatch", f"Credential should be scoped to a "
                          f"valid region and the service route53, not {region}/{service}.")
        tok = req.header("X-Amz-Security-Token")
        if self.token is not None or tok is not None:
            if tok != self.token:
                return _error(403, "InvalidClientTokenId", "The security token included in "
                              "the request is invalid.")
            if "x-amz-security-token" not in names:
                return _error(403, "SignatureDoesNotMatch", "X-Amz-Security-Token must be "
                              "signed.")
        headers = {}
        for n in names:
            v = req.header(n)
            if v is None:
                return _error(403, "SignatureDoesNotMatch", f"signed header {n} is missing")
            headers[n] = v
        aws = AWSRequest(method=req.method, url=f"http://{req.header('Host')}{req.target}",
                         headers=headers, data=req.body)
        aws.context["timestamp"] = amz_date
        signer = SigV4Auth(Credentials(self.access_key, self.secret_key, self.token),
                           "route53", self.region)
        canonical = signer.canonical_request(aws)
        want = signer.signature(signer.string_to_sign(aws, canonical), aws)
        if not hmac.compare_digest(want, signature):
            self.bad_signatures += 1
            self.last_canonical = canonical     # what a failing test prints
            return _error(403, "SignatureDoesNotMatch", "The request signature we calculated "
                          "does not match the signature you provided. Check your AWS Secret "
                          "Access Key and signing method.")
        return None

    # ------------------------------------------------------------ routes

    def route(self, req):
        bad = self._authenticate(req)
        if bad is not None:
            return bad
        parts = req.path.split("/")
        # ["", "2013-04-01", "hostedzone", ID, "rrset", ""?]
        if len(parts) < 5 or parts[1:3] != ["2013-04-01", "hostedzone"] or parts[4] != "rrset":
            return _error(404, "UnknownOperationException", f"no route {req.path}")
        if parts[3] != self.zone_id:
            return _error(404, "NoSuchHostedZone", f"No hosted zone found with ID: {parts[3]}")
        if req.method == "GET" and len(parts) == 5:
            return self._list(req)
        if req.method == "POST" and len(parts) == 6 and parts[5] == "":
            return self._change(req)
        return _error(405, "MethodNotAllowed", f"{req.method} {req.path}")

    def _list(self, req):
        q = req.query
        if set(q) - {"name", "type", "identifier", "maxitems"} or \
                any(len(v) != 1 for v in q.values()):
            return _error(400, "InvalidInput", "Invalid query parameters")
        name = q.get("name", [None])[0]
        rtype = q.get("type", [None])[0]
        ident = q.get("identifier", [""])[0]
        if rtype is not None and name is None:
            return _error(400, "InvalidInput", "The type parameter requires a name")
        if rtype is not None and rtype not in _TYPES:
            return _error(400, "InvalidInput", f"Invalid type: {rtype}")
        try:
            maxitems = int(q.get("maxitems", ["300"])[0])
        except ValueError:
            maxitems = 0
        if not 1 <= maxitems <= 300:
            return _error(400, "InvalidInput", "maxitems must be from 1 to 300")
        if self.page_size is not None:
            maxitems = min(maxitems, self.page_size)
        keys = sorted(self.records, key=lambda k: _sort_key(*k))
        if name is not None:
            start = _sort_key(name.lower() if name.endswith(".") else name.lower() + ".",
                              rtype or "", ident)
            keys = [k for k in keys if _sort_key(*k) >= start]
        page, rest = keys[:maxitems], keys[maxitems:]
        sets = [self._set_xml(k) for k in page]
        root = _xml("ListResourceRecordSetsResponse", _xml("ResourceRecordSets", *sets),
                    _text("IsTruncated", "true" if rest else "false"),
                    _text("MaxItems", maxitems))
        if rest:
            nname, ntype, nid = rest[0]
            root.append(_text("NextRecordName", nname))
            root.append(_text("NextRecordType", ntype))
            if nid:
                root.append(_text("NextRecordIdentifier", nid))
        return 200, {"Content-Type": "text/xml"}, _doc(root)

    def _set_xml(self, key):
        name, rtype, _ = key
        r = self.records[key]
        el = _xml("ResourceRecordSet", _text("Name", name), _text("Type", rtype))
        if r["set_id"]:
            el.append(_text("SetIdentifier", r["set_id"]))
            el.append(_text("Weight", 10))
        if r["alias"]:
            el.append(_xml("AliasTarget", _text("HostedZoneId", "Z2FDTNDATAQYW2"),
                           _text("DNSName", r["alias"]), _text("EvaluateTargetHealth", "false")))
            return el
        el.append(_text("TTL", r["ttl"]))
        el.append(_xml("ResourceRecords", *[_xml("ResourceRecord", _text("Value", v))
                                            for v in r["values"]]))
        return el

    # ------------------------------------------------------------ changes

    def _change(self, req):
        try:
            root = ET.fromstring(req.body)
        except ET.ParseError as e:
            return _error(400, "InvalidInput", f"Could not parse the request body: {e}")
        ns = "{" + R53_NS + "}"
        if root.tag != ns + "ChangeResourceRecordSetsRequest":
            return _error(400, "InvalidInput", f"Unexpected root element {root.tag}")
        if [c.tag for c in root] != [ns + "ChangeBatch"]:
            return _error(400, "InvalidInput", "ChangeBatch is required")
        batch = root[0]
        tags = [c.tag for c in batch]
        if tags not in ([ns + "Changes"], [ns + "Comment", ns + "Changes"]):
            return _error(400, "InvalidInput", "ChangeBatch holds an optional Comment, then "
                          "Changes")
        changes = batch[len(tags) - 1]
        if len(changes) == 0 or len(changes) > 100 or \
                any(c.tag != ns + "Change" for c in changes):
            return _error(400, "InvalidInput", "Changes holds 1 to 100 Change")
        parsed = []
        for c in changes:
            one = self._parse_change(c, ns)
            if isinstance(one, str):
                return _error(400, "InvalidInput", one)
            parsed.append(one)
        new = {k: dict(v) for k, v in self.records.items()}
        msgs, seen = [], set()
        for action, name, rtype, ttl, values in parsed:
            key = (name, rtype, "")
            label = f"[name='{name}', type='{rtype}']"
            if key in seen:
                msgs.append(f"The request contains an invalid set of changes for a resource "
                            f"record set '{rtype} {name}'")
                continue
            seen.add(key)
            if name != self.zone and not name.endswith("." + self.zone):
                msgs.append(f"RRSet with DNS name {name} is not permitted in zone {self.zone}")
                continue
            bad = [v for v in values if not self._value_ok(rtype, v)]
            if bad:
                if rtype == "CNAME":
                    msgs.append(f"Invalid Resource Record: FATAL problem: "
                                f"DomainLabelEmpty (Domain label is empty) encountered with "
                                f"'{bad[0]}'")
                else:
                    msgs.append(f"ARRDATAIllegalIPv{4 if rtype == 'A' else 6}Address "
                                f"(Value is not a valid IPv{4 if rtype == 'A' else 6} "
                                f"address: {bad[0]})")
                continue
            if rtype == "CNAME" and len(values) != 1:
                msgs.append(f"RRSet of type CNAME with DNS name {name} has more than one "
                            "resource record")
                continue
            cur = new.get(key)
            if action == "DELETE":
                if cur is None:
                    msgs.append(f"Tried to delete resource record set {label} but it was "
                                "not found")
                elif cur["ttl"] != ttl or sorted(cur["values"]) != sorted(values):
                    msgs.append(f"Tried to delete resource record set {label} but the "
                                "values provided do not match the current values")
                else:
                    del new[key]
                continue
            if action == "CREATE" and cur is not None:
                msgs.append(f"Tried to create resource record set {label} but it already "
                            "exists")
                continue
            new[key] = {"ttl": ttl, "values": values, "alias": None, "set_id": None}
        # The end state: a CNAME alone at its name, whatever the order.
        for name in sorted({n for _, n, _, _, _ in parsed}):
            types = {k[1] for k in new if k[0] == name}
            if "CNAME" in types and len(types) > 1:
                msgs.append(f"RRSet of type CNAME with DNS name {name} is not permitted as it "
                            "conflicts with other records with the same DNS name in zone "
                            f"{self.zone}")
        if msgs:
            return _batch_error(msgs)
        self.records = new
        self.changes.append([(a, n, t) for a, n, t, _, _ in parsed])
        self.history.append(sorted((n, t) for n, t, _ in new))
        info = _xml("ChangeInfo", _text("Id", "/change/C" + secrets.token_hex(8).upper()),
                    _text("Status", "PENDING"),
                    _text("SubmittedAt", datetime.datetime.utcnow().strftime(
                        "%Y-%m-%dT%H:%M:%S.000Z")))
        comment = batch.find(ns + "Comment")
        if comment is not None:
            info.append(_text("Comment", comment.text or ""))
        return 200, {"Content-Type": "text/xml"}, _doc(_xml("ChangeResourceRecordSetsResponse",
                                                            info))

    def _parse_change(self, c, ns):
        """(action, name, type, ttl, values), or what is wrong."""
        if [x.tag for x in c] != [ns + "Action", ns + "ResourceRecordSet"]:
            return "Change holds Action, then ResourceRecordSet"
        action = c[0].text
        if action not in ("CREATE", "DELETE", "UPSERT") or len(c[0]):
            return f"Invalid Action: {action}"
        rrs = c[1]
        if [x.tag for x in rrs] != [ns + "Name", ns + "Type", ns + "TTL",
                                    ns + "ResourceRecords"]:
            return "ResourceRecordSet holds Name, Type, TTL, ResourceRecords"
        name = (rrs[0].text or "").lower()
        rtype = rrs[1].text or ""
        if not name or len(name) > 1024 or rtype not in _TYPES:
            return f"Invalid Name or Type: {name!r} {rtype!r}"
        if not name.endswith("."):
            name += "."
        if not re.fullmatch(r"\d{1,10}", rrs[2].text or "") or int(rrs[2].text) > 2147483647:
            return f"Invalid TTL: {rrs[2].text!r}"
        values = []
        for rr in rrs[3]:
            if rr.tag != ns + "ResourceRecord" or [x.tag for x in rr] != [ns + "Value"] or \
                    not rr[0].text:
                return "ResourceRecords holds ResourceRecord, each one Value"
            values.append(rr[0].text)
        if not values or len(values) > 1000:
            return "ResourceRecords holds 1 to 1000 ResourceRecord"
        return action, name, rtype, int(rrs[2].text), values

    @staticmethod
    def _value_ok(rtype, v):
        if rtype == "CNAME":
            return re.fullmatch(r"(?:[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?\.)*"
                                r"[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?\.?",
                                v) is not None and len(v.rstrip(".")) <= 253
        if rtype not in ("A", "AAAA"):
            return True
        try:
            a = ipaddress.ip_address(v)
        except ValueError:
            return False
        return a.version == (4 if rtype == "A" else 6)


route53_fake = fake_fixture(Route53Fake, "route53_fake")
