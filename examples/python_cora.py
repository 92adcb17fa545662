"""python_cora.py - gcn_bin on Cora from Python (after `pip install .`): prints the test
accuracy, 81.30 % with the trained weights, on the CPU reference interpreter.
    python3 examples/python_cora.py [DATA_ROOT]        (from the repository root)"""
import sys

import bgnn

root = sys.argv[1] if len(sys.argv) > 1 else "../shared/data"
model = bgnn.compile("examples/gcn_bin.bgnn", target="cpu")
session = model.session(weights="examples/weights/gcn_bin_cora.safetensors", data=root + "/cora")
session.run()
print("gcn_bin on Cora (%s): test accuracy %.2f%%" % (model.device_name, session.accuracy("test")))
