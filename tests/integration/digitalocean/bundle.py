#!/usr/bin/env python3
"""Bundles DigitalOcean's published OpenAPI document, trimmed to the
domain-record operations the digitalocean provider calls, into one
self-contained JSON file for Prism (digitalocean-domains-openapi.json).

DigitalOcean publishes the document in github.com/digitalocean/openapi
split over many YAML files: specification/DigitalOcean-public.v2.yaml
names each path's operations by a $ref into resources/, and those refer
on to models, parameters, responses and shared/.  This script reads the
files out of a git clone at a given commit, keeps only PATHS and
inlines every $ref (the trimmed part of the document has no recursive
schema), and drops what Prism does not read (code samples).

    python3 bundle.py GIT_DIR COMMIT > digitalocean-domains-openapi.json

The result is committed, with the commit it came from in its
info.x-source, since the tests cannot fetch.
"""

import json
import posixpath
import subprocess
import sys

import yaml

ROOT = "specification/DigitalOcean-public.v2.yaml"

# The operations the provider calls (providers/digitalocean.c), and PUT,
# which the fake answers as the real API does.
PATHS = {
    "/v2/domains/{domain_name}/records": ("get", "post"),
    "/v2/domains/{domain_name}/records/{domain_record_id}": ("patch", "put", "delete"),
}

DROP = {"x-codeSamples"}


class Bundler:
    def __init__(self, git_dir, commit):
        self.git_dir, self.commit = git_dir, commit
        self.files = {}

    def load(self, path):
        if path not in self.files:
            raw = subprocess.run(["git", "--git-dir", self.git_dir, "show",
                                  f"{self.commit}:{path}"], check=True,
                                 capture_output=True).stdout
            self.files[path] = yaml.safe_load(raw)
        return self.files[path]

    def target(self, ref, here):
        """(file, the node) a $ref names, relative to the file here."""
        file, _, pointer = ref.partition("#")
        path = posixpath.normpath(posixpath.join(posixpath.dirname(here), file)) \
            if file else here
        node = self.load(path)
        for part in (p for p in pointer.split("/") if p):
            node = node[part.replace("~1", "/").replace("~0", "~")]
        return path, node

    def inline(self, node, here, seen=()):
        if isinstance(node, list):
            return [self.inline(v, here, seen) for v in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            key = (here, node["$ref"])
            if key in seen:
                raise SystemExit(f"recursive $ref {node['$ref']} in {here}")
            path, target = self.target(node["$ref"], here)
            out = self.inline(target, path, seen + (key,))
            # OpenAPI 3.1 allows siblings of $ref (a description): keep them.
            extra = {k: self.inline(v, here, seen) for k, v in node.items() if k != "$ref"}
            return dict(out, **extra) if isinstance(out, dict) and extra else out
        return {k: self.inline(v, here, seen) for k, v in node.items() if k not in DROP}


def main():
    git_dir, commit = sys.argv[1], sys.argv[2]
    b = Bundler(git_dir, commit)
    root = b.load(ROOT)
    paths = {}
    for p, methods in PATHS.items():
        item = b.inline(root["paths"][p], ROOT)
        paths[p] = {m: item[m] for m in methods}
    doc = {
        "openapi": root["openapi"],
        "info": dict(b.inline(root["info"], ROOT), **{
            "description": "DigitalOcean's public API v2, trimmed to the domain-record "
                           "operations ddup's digitalocean provider calls.",
            "x-source": f"https://github.com/digitalocean/openapi/tree/{commit}/"
                        + posixpath.dirname(ROOT),
            "x-bundled-by": "tests/integration/digitalocean/bundle.py"}),
        "servers": root.get("servers", []),
        "security": root.get("security", []),
        "paths": paths,
        "components": {"securitySchemes": {
            k: v for k, v in b.inline(root["components"]["securitySchemes"], ROOT).items()
            if any(k in s for s in root.get("security", []))}},
    }
    json.dump(doc, sys.stdout, indent=1, sort_keys=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
