"""sandcrawler: harvest, archive, process and catalogue scholarly documents."""

__version__ = "0.1.0"
