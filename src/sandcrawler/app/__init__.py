"""The composition root: settings assembled, services built once, workers by name."""
