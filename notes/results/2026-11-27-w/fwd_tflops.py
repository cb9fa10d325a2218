import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
print(" ".join("%s=%s" % (o["name"], o["fwd_tflops"]) for o in rows if "name" in o))
