#!/usr/bin/env python3
"""Checks that the products an app depends on reach nothing Linux-only, server or CLI.

An app on an Apple platform depends on Tandem, TandemSync and TandemURLSession. Walking
`swift package describe --type json` from those products' targets through every target
dependency, none may be libcurl (CCurl, TandemCurl), the CLI, an executable, a test or test
support target, or anything of the server; the packages they reach must be on the list below
(GRDB and swift-log linked; swift-syntax only below the macro target, a compiler plugin built
for the host), no linker settings or unsafe flags, and the only system library is zlib (on
every Apple platform). A failure names the path that reaches the offending target.

Usage: Scripts/check-app-dependencies.py [--self-test]
  --self-test  plant each kind of offence in the real package and check that each is reported

`swift package describe --type json` gives the target graph; `swift package dump-package` the
package of each product a target uses and the targets' linker settings, which describe lacks.
"""
import copy
import json
import subprocess
import sys
from pathlib import Path

APP_PRODUCTS = ["Tandem", "TandemSync", "TandemURLSession"]
# Products of other packages the app-facing targets may link, with their package: the store's
# SQLite and logging.
ALLOWED_LINKED_PRODUCTS = {("GRDB", "GRDB.swift"), ("GRDBSQLite", "GRDB.swift"), ("Logging", "swift-log")}
# Below a macro target (a compiler plugin, built for the host and never linked into the app):
# swift-syntax.
ALLOWED_MACRO_PACKAGES = {"swift-syntax"}
ALLOWED_SYSTEM_LIBRARIES = {"CZlib"}
FORBIDDEN_TARGETS = {
    "CCurl": "libcurl (Linux's transport; an iOS app does not link it)",
    "TandemCurl": "the libcurl transport",
    "TandemCLI": "the command line tool",
}


def swift_json(root: Path, *command: str) -> dict:
    output = subprocess.run(["swift", "package", *command], cwd=root, check=True, capture_output=True, text=True).stdout
    return json.loads(output[output.index("{"):])  # anything printed before the JSON (resolving) is skipped


def package_products(manifest: dict) -> dict:
    """Each target's dependencies on other packages' products, as (product, package) pairs."""
    found = {}
    for target in manifest["targets"]:
        pairs = []
        for dependency in target.get("dependencies", []):
            if "product" in dependency:
                name, package = dependency["product"][0], dependency["product"][1]
                pairs.append((name, package))
        found[target["name"]] = pairs
    return found


def linker_settings(manifest: dict) -> dict:
    """Each target's linker settings and unsafe flags (which `describe` does not show)."""
    found = {}
    for target in manifest["targets"]:
        settings = [
            json.dumps(setting["kind"]) for setting in target.get("settings", [])
            if setting.get("tool") == "linker" or "unsafeFlags" in setting.get("kind", {})
        ]
        found[target["name"]] = settings
    return found


def offences(description: dict, manifest: dict) -> list[str]:
    targets = {target["name"]: target for target in description["targets"]}
    products = {product["name"]: product for product in description["products"]}
    packages = package_products(manifest)
    linker = linker_settings(manifest)
    found = []
    for product_name in APP_PRODUCTS:
        product = products.get(product_name)
        if product is None:
            found.append(f"product {product_name} is missing: an app cannot depend on it")
            continue
        # Breadth first from the product's targets, keeping how each target was reached and
        # whether through a macro (host-only); a target reached both ways counts as linked.
        paths = {name: ([name], False) for name in product["targets"]}
        queue = list(product["targets"])
        while queue:
            name = queue.pop(0)
            trail, host_only = paths[name]
            path = f"product {product_name}: " + " → ".join(trail)
            target = targets.get(name)
            if target is None:
                found.append(f"{path}: no such target")
                continue
            reason = FORBIDDEN_TARGETS.get(name)
            if reason is None and "server" in name.lower():
                reason = "the server"
            if reason is None and target.get("type") in ("executable", "test", "snippet", "plugin"):
                reason = f"a {target['type']} target"
            if reason is None and target.get("path", "").startswith("Tests/"):
                reason = "test support"
            if reason is None and target.get("module_type") == "SystemLibraryTarget" and name not in ALLOWED_SYSTEM_LIBRARIES:
                reason = "a system library apps do not have"
            if reason is None and not host_only and linker.get(name):
                reason = "linker settings or unsafe flags: " + ", ".join(linker[name])
            if reason is not None:
                found.append(f"{path}: {reason}")
            below_macro = host_only or target.get("type") == "macro"
            for dependency, package in packages.get(name, []):
                allowed = package in ALLOWED_MACRO_PACKAGES if below_macro else (dependency, package) in ALLOWED_LINKED_PRODUCTS
                if not allowed:
                    allowed_list = "swift-syntax" if below_macro else "GRDB, GRDBSQLite, swift-log's Logging"
                    where = "below a macro" if below_macro else "linked into apps"
                    found.append(f"{path} → {dependency} ({package}): not a package product allowed {where} ({allowed_list})")
            for dependency in target.get("target_dependencies", []):
                if dependency not in paths or (paths[dependency][1] and not below_macro):
                    paths[dependency] = (trail + [dependency], below_macro)
                    queue.append(dependency)
    return found


def self_test(description: dict, manifest: dict) -> int:
    """Each planted offence must be reported; the real package must pass."""
    def planted(change) -> tuple:
        copied, dumped = copy.deepcopy(description), copy.deepcopy(manifest)
        change({target["name"]: target for target in copied["targets"]}, {target["name"]: target for target in dumped["targets"]}, copied)
        return copied, dumped

    def add(target_name, value):
        def change(targets, _, __):
            targets[target_name].setdefault("target_dependencies", []).append(value)
        return change

    def add_product(target_name, product, package):
        def change(_, dumped, __):
            dumped[target_name].setdefault("dependencies", []).append({"product": [product, package, None, None]})
        return change

    def add_linker_flag(targets_, dumped, __):
        dumped["TandemSync"].setdefault("settings", []).append({"tool": "linker", "kind": {"linkedLibrary": {"_0": "curl"}}})

    def add_server_target(targets, _, copied):
        copied["targets"].append({"name": "TandemServerBits", "type": "library", "module_type": "SwiftTarget", "path": "Sources/TandemServerBits"})
        targets["TandemWire"].setdefault("target_dependencies", []).append("TandemServerBits")

    cases = {
        "libcurl under the engine": (add("TandemSync", "CCurl"), "CCurl"),
        "the curl transport under the URLSession one": (add("TandemURLSession", "TandemCurl"), "TandemCurl"),
        "the CLI deep under the store": (add("TandemLocking", "TandemCLI"), "TandemCLI"),
        "ArgumentParser under the store": (add_product("Tandem", "ArgumentParser", "swift-argument-parser"), "ArgumentParser"),
        "a product named Logging from another package": (add_product("TandemSync", "Logging", "not-swift-log"), "not-swift-log"),
        "swift-syntax linked into the store, not through the macro": (add("Tandem", "TandemMacrosSupport"), "SwiftSyntax"),
        "-lcurl in the engine's linker settings": (add_linker_flag, "linkedLibrary"),
        "a server target under the wire types": (add_server_target, "TandemServerBits"),
        "test support under the engine": (add("TandemSync", "TandemSyncTestSupport"), "TandemSyncTestSupport"),
    }
    failures = 0
    for name, (change, expected) in cases.items():
        reported = offences(*planted(change))
        if not any(expected in line for line in reported):
            print(f"self-test: planting {name} went unnoticed")
            failures += 1
    if offences(description, manifest):
        print("self-test: the real package fails (run without --self-test to see why)")
        failures += 1
    if not failures:
        print(f"self-test: all {len(cases)} planted offences reported, the real description passes")
    return 1 if failures else 0


def main() -> int:
    args = sys.argv[1:]
    root = Path(__file__).resolve().parent.parent
    description = swift_json(root, "describe", "--type", "json")
    manifest = swift_json(root, "dump-package")
    if "--self-test" in args:
        return self_test(description, manifest)
    found = offences(description, manifest)
    if found:
        print("The app-facing products reach what an app must not link:")
        for line in found:
            print("  " + line)
        print("Move the dependency to a target apps do not use (the CLI, TandemCurl, the server package).")
        return 1
    print("app dependencies: " + ", ".join(APP_PRODUCTS) + " reach no libcurl, server, CLI or test target")
    return 0


if __name__ == "__main__":
    sys.exit(main())
