"""How each worker is built from a process's services, one module per domain.

The worker registry (``app.workers``) names these functions as ``module:function``
and imports a module only when its worker is built, so a command that persists
rows never loads PDFium, and one that processes PDFs never loads the dataset
platforms."""
