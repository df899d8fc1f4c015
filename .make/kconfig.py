#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Kconfig helpers (kconfiglib):
  kconfig.py defconfig CONFIG          write the default configuration to CONFIG
  kconfig.py header CONFIG HEADER      write the C autoconf header for CONFIG
"""
import os
import sys

import kconfiglib


def main(argv):
    if len(argv) < 3 or argv[1] not in ("defconfig", "header"):
        sys.exit(__doc__)
    top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    kconf = kconfiglib.Kconfig(os.path.join(top, "Kconfig"), warn_to_stderr=True)
    if argv[1] == "defconfig":
        print(kconf.write_config(argv[2]))
    else:
        kconf.load_config(argv[2])
        os.makedirs(os.path.dirname(os.path.abspath(argv[3])), exist_ok=True)
        kconf.write_autoconf(argv[3])


if __name__ == "__main__":
    main(sys.argv)
