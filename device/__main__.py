import sys

from pegwatch.device.cli import main

sys.exit(main())
