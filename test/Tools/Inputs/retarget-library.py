"""Copies the compiled library argv[1] to argv[2] with its manifest naming
the device argv[3] (three letters, so that the library stays valid): what a
library for another device looks like to a host."""

import sys

source, target, device = sys.argv[1], sys.argv[2], sys.argv[3]
assert len(device) == 3, "the device name must keep the manifest's length"
data = open(source, "rb").read()
field = b'"device":"cpu"'
assert data.count(field) == 1, "expected one cpu manifest"
open(target, "wb").write(data.replace(field, b'"device":"%s"' % device.encode()))
