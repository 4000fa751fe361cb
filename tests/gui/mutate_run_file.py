#!/usr/bin/env python3
"""Writes mutated copies of a recorded run: each copy changes one leaf (a number, a string, a boolean, an array) of
the run file to a value a hostile or damaged file could hold, so that `shot --open-run` meets it.

  mutate_run_file.py RUN.json OUT_DIR COUNT SEED

Leaves are sampled (with SEED, so a failure can be replayed) rather than all taken: a run file has thousands of
them, and the test must stay short. Arrays are mutated as wholes (emptied, cut to one element) as well as through
their elements. Prints one line per file written: FILE<tab>PATH<tab>MUTATION.
"""
import copy
import json
import os
import random
import sys

NUMBER_VALUES = [-1, 0, 1, 1e308, -1e308, None, 100000, 2**40]
ARRAY_MUTATIONS = ["emptied", "cut to one element"]


def leaves(node, path):
    """Every (path, value) below node: scalars and arrays (arrays also as wholes)."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from leaves(value, path + [key])
    elif isinstance(node, list):
        yield path, node
        for i, value in enumerate(node[:64]):  # long arrays: their first elements stand for the rest
            yield from leaves(value, path + [i])
    else:
        yield path, node


def path_text(path):
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else ("." if text else "") + part
    return text


def set_at(doc, path, value):
    node = doc
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value


def mutations_for(value):
    if isinstance(value, list):
        return ARRAY_MUTATIONS
    if isinstance(value, bool):
        return [not value, None]
    if isinstance(value, (int, float)):
        return NUMBER_VALUES
    if isinstance(value, str):
        return ["", "x" * 5000, None]
    return [0]  # null: a number where nothing was


def main():
    run_path, out_dir, count, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    run = json.load(open(run_path))
    # "recorded" only says where the run was made; the format version is tested elsewhere.
    candidates = [(p, v) for p, v in leaves(run, []) if p and p[0] not in ("recorded", "lesson")]
    # Each key counts once however long its arrays are (series points would crowd out the scalars otherwise):
    # a key is drawn first, then one of its places.
    by_key = {}
    for p, v in candidates:
        by_key.setdefault(path_text(["*" if isinstance(part, int) else part for part in p]), []).append((p, v))
    keys = sorted(by_key)
    rng = random.Random(seed)
    stem = os.path.splitext(os.path.basename(run_path))[0]
    for n in range(count):
        path, value = rng.choice(by_key[rng.choice(keys)])
        mutation = rng.choice(mutations_for(value))
        doc = copy.deepcopy(run)
        if mutation == "emptied":
            set_at(doc, path, [])
        elif mutation == "cut to one element":
            set_at(doc, path, value[:1])
        else:
            set_at(doc, path, mutation)
        out = os.path.join(out_dir, f"{stem}-{n}.json")
        json.dump(doc, open(out, "w"))
        shown = mutation if isinstance(mutation, str) and len(mutation) < 40 else json.dumps(mutation)[:40]
        print(f"{out}\t{path_text(path)}\t{shown}")


main()
