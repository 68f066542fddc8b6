"""The small display: one drawing (Pillow, through luma) for many devices.

* :mod:`pegwatch.device.display.model` -- what to show (:class:`DisplayModel`) and
  :func:`format_time`;
* :mod:`pegwatch.device.display.render` -- the Pillow drawing;
* :mod:`pegwatch.device.display.devices` -- ``[display]`` settings and
  :func:`open_display` (OLEDs, LCDs, emulators, dummy, terminal, HD44780);
* :mod:`pegwatch.device.display.charlcd` -- the text layout for character LCDs;
* :mod:`pegwatch.device.display.loop` -- the thread that keeps the display current.

Nothing here opens a device or imports a driver at import time.
"""
