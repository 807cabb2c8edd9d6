#!/usr/bin/env python3
"""Checks that the products an app depends on reach nothing Linux-only, server or CLI.

An app on an Apple platform depends on Tandem, TandemSync and TandemURLSession. Walking
`swift package describe --type json` from those products' targets through every target
dependency, none may be libcurl (CCurl, TandemCurl), the CLI, an executable, a test or test
support target, or anything of the server; the packages they reach must be on the list below
(GRDB, swift-syntax for the macros, swift-log), and the only system library is zlib (on every
Apple platform). A failure names the path that reaches the offending target.

Usage: Scripts/check-app-dependencies.py [--describe FILE] [--self-test]
  --describe FILE  read the description from FILE instead of running swift package describe
  --self-test      plant each kind of offence in the real description and check that each fails
"""
import copy
import json
import subprocess
import sys
from pathlib import Path

APP_PRODUCTS = ["Tandem", "TandemSync", "TandemURLSession"]
# Products of other packages an app may link: the store's SQLite, the macros' compiler plugin
# (built for the host, not linked into the app), logging.
ALLOWED_PACKAGE_PRODUCTS = {
    "GRDB", "GRDBSQLite",
    "SwiftSyntax", "SwiftSyntaxBuilder", "SwiftSyntaxMacros", "SwiftDiagnostics", "SwiftCompilerPlugin",
    "Logging",
}
ALLOWED_SYSTEM_LIBRARIES = {"CZlib"}
FORBIDDEN_TARGETS = {
    "CCurl": "libcurl (Linux's transport; an iOS app does not link it)",
    "TandemCurl": "the libcurl transport",
    "TandemCLI": "the command line tool",
}


def describe(root: Path) -> dict:
    output = subprocess.run(
        ["swift", "package", "describe", "--type", "json"], cwd=root, check=True, capture_output=True, text=True
    ).stdout
    return json.loads(output[output.index("{"):])  # anything printed before the JSON (resolving) is skipped


def offences(description: dict) -> list[str]:
    targets = {target["name"]: target for target in description["targets"]}
    products = {product["name"]: product for product in description["products"]}
    found = []
    for product_name in APP_PRODUCTS:
        product = products.get(product_name)
        if product is None:
            found.append(f"product {product_name} is missing: an app cannot depend on it")
            continue
        # Breadth first from the product's targets, keeping how each target was reached.
        paths = {name: [name] for name in product["targets"]}
        queue = list(product["targets"])
        while queue:
            name = queue.pop(0)
            path = f"product {product_name}: " + " → ".join(paths[name])
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
            if reason is not None:
                found.append(f"{path}: {reason}")
            for dependency in target.get("product_dependencies", []):
                if dependency not in ALLOWED_PACKAGE_PRODUCTS:
                    found.append(f"{path} → {dependency}: a package product not on the apps' list")
            for dependency in target.get("target_dependencies", []):
                if dependency not in paths:
                    paths[dependency] = paths[name] + [dependency]
                    queue.append(dependency)
    return found


def self_test(description: dict) -> int:
    """Each planted offence must be reported; the real description must pass."""
    def planted(change) -> dict:
        copied = copy.deepcopy(description)
        change({target["name"]: target for target in copied["targets"]}, copied)
        return copied

    def add(target_name, key, value):
        def change(targets, _):
            targets[target_name].setdefault(key, []).append(value)
        return change

    def add_server_target(targets, copied):
        copied["targets"].append({"name": "TandemServerBits", "type": "library", "module_type": "SwiftTarget", "path": "Sources/TandemServerBits"})
        targets["TandemWire"].setdefault("target_dependencies", []).append("TandemServerBits")

    cases = {
        "libcurl under the engine": (add("TandemSync", "target_dependencies", "CCurl"), "CCurl"),
        "the curl transport under the URLSession one": (add("TandemURLSession", "target_dependencies", "TandemCurl"), "TandemCurl"),
        "the CLI deep under the store": (add("TandemLocking", "target_dependencies", "TandemCLI"), "TandemCLI"),
        "ArgumentParser under the store": (add("Tandem", "product_dependencies", "ArgumentParser"), "ArgumentParser"),
        "a server target under the wire types": (add_server_target, "TandemServerBits"),
        "test support under the engine": (add("TandemSync", "target_dependencies", "TandemSyncTestSupport"), "TandemSyncTestSupport"),
    }
    failures = 0
    for name, (change, expected) in cases.items():
        reported = offences(planted(change))
        if not any(expected in line for line in reported):
            print(f"self-test: planting {name} went unnoticed")
            failures += 1
    if offences(description):
        print("self-test: the real description fails (run without --self-test to see why)")
        failures += 1
    if not failures:
        print(f"self-test: all {len(cases)} planted offences reported, the real description passes")
    return 1 if failures else 0


def main() -> int:
    args = sys.argv[1:]
    root = Path(__file__).resolve().parent.parent
    if "--describe" in args:
        description = json.loads(Path(args[args.index("--describe") + 1]).read_text())
    else:
        description = describe(root)
    if "--self-test" in args:
        return self_test(description)
    found = offences(description)
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
