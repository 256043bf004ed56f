"""``python -m lyra_lab.synthetic --seed 0 --out FILE``: write a synthetic corpus (see ``_cli``)."""

import sys

from lyra_lab.synthetic._cli import main

if __name__ == "__main__":
    sys.exit(main())
