"""Storage: the blob store (local, S3), the resource layout and catalogue, the PDF table."""
