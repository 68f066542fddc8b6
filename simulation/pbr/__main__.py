"""``python -m pegwatch.simulation.pbr OUT --boards N``: render a cached physically based hard set."""

from pegwatch.simulation.pbr.testbed import main

raise SystemExit(main())
