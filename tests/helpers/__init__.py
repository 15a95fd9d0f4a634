"""What the tests share besides fixtures: paths, the CLI runners, the one skip helper,
waiting with a deadline, and per-area helpers (Kafka, platforms, match engines). Tests
import these from here; ``conftest.py`` only declares fixtures."""
