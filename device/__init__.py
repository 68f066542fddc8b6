"""The Pi's shells: GPIO, display, camera, the table program and the CLI."""
