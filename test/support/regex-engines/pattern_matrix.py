# Reads {"patterns": [...], "samples": [...]} as JSON on stdin; prints one line per pattern: for
# each sample 1 if Python's `re` finds the pattern in it (re.search, as python-jsonschema does),
# else 0; or "E <message>" when the pattern does not compile.
import json
import re
import sys

data = json.load(sys.stdin)
for source in data["patterns"]:
    try:
        pattern = re.compile(source)
    except re.error as error:
        print("E", str(error).replace("\n", " "))
        continue
    print("".join("1" if pattern.search(sample) else "0" for sample in data["samples"]))
