"""PDF processing: what a PDF says about itself (extract.py); more to come."""
