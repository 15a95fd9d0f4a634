"""``sandcrawler grobid-serve``: GROBID's REST API on the embedded cascade
(``sandcrawler.grobid.service``; docs/grobid-service.md)."""

from __future__ import annotations

import logging

import click
import uvicorn

from sandcrawler.app.builders.grobid_serve import grobid_service
from sandcrawler.cli.options import open_services
from sandcrawler.cli.serve import listen
from sandcrawler.core.errors import ConfigError
from sandcrawler.process.sandbox import SandboxError
from sandcrawler.site import exposure
from sandcrawler.site.app import Guard

SECTION = "grobid_serve"
#: connections (and their requests) at once
MAX_CONNECTIONS = 1024


@click.command("grobid-serve")
@click.option("--host", default=None,
              help="Address to listen on [default: setting grobid_serve.host, 127.0.0.1]. "
                   "Anything but loopback needs a token (setting grobid_serve.token).")
@click.option("--port", type=click.IntRange(0, 65535), default=None,
              help="Port to listen on [default: setting grobid_serve.port, 8070, GROBID's].")
@click.option("--concurrency", type=click.IntRange(1, 256), default=None,
              help="Worker processes: PDFs (or citation lists) processed at once; a request "
                   "that finds none free is answered 503 at once, as GROBID answers "
                   "[default: setting grobid_serve.concurrency, the number of cores].")
def grobid_serve(host: str | None, port: int | None, concurrency: int | None) -> None:
    """Answer GROBID's REST API with the embedded extraction cascade, so GROBID's
    clients work unchanged without a GROBID server.

    The paths, form fields, parameters, answers (TEI, or BibTeX with Accept:
    application/x-bibtex) and statuses are GROBID's: /api/isalive,
    /api/version, /api/processHeaderDocument, /api/processFulltextDocument,
    /api/processReferences (a PDF in the form field `input`),
    /api/processCitation and /api/processCitationList (`citations`),
    /api/processHeaderNames and /api/processCitationNames (`names`),
    /api/processAffiliations, /api/processDate; Prometheus metrics at
    /metrics. Each PDF runs in one of --concurrency sandboxed processes with
    a time and a memory limit (grobid_serve.timeout, memory_limit_mb); uploads
    are limited in size and time (max_upload_mb, upload_timeout).
    consolidateHeader and consolidateCitations match against our own catalog
    (the match index) when there is one. Anything but loopback needs
    grobid_serve.token (Authorization: Bearer TOKEN). Stop with Ctrl-C.

    \b
      sandcrawler grobid-serve                  # http://127.0.0.1:8070/api/...
      sandcrawler grobid-serve --port 8071 --concurrency 4
      curl --form input=@paper.pdf localhost:8070/api/processFulltextDocument
      curl -H 'Accept: application/x-bibtex' --data-urlencode \\
        'citations=Graff, Expert Opin Ther Targets (2002) 6(1): 103-113' \\
        localhost:8070/api/processCitation
      grobid_client --server http://127.0.0.1:8070 --input pdfs/ \\
        --output tei/ processFulltextDocument
    """
    services = open_services(**{f"{SECTION}.host": host, f"{SECTION}.port": port,
                                f"{SECTION}.concurrency": concurrency})
    settings = services.settings.grobid_serve
    exposure.check(settings, SECTION)  # an unprotected exposure, before any other work
    sock = listen(settings.host, settings.port)
    service = grobid_service(services)
    try:
        try:
            service.warm()
        except SandboxError as e:
            raise ConfigError(f"the workers cannot start ({e}): raise "
                              "grobid_serve.memory_limit_mb or timeout") from None
        bound = sock.getsockname()[1]  # the one the system chose for --port 0
        shown = f"[{settings.host}]" if ":" in settings.host else settings.host
        consolidation = ("consolidation on the match index"
                         if service.parts.consolidator is not None else "no consolidation")
        click.echo(f"sandcrawler grobid-serve: http://{shown}:{bound}/api/ "
                   f"({service.pool.size} workers; {consolidation}; Ctrl-C stops)", err=True)
        app = Guard(service.app(), settings.token, exposure.Hosts.of(settings, SECTION))
        # connections at once, past which uvicorn itself answers 503 (file descriptors)
        config = uvicorn.Config(app, log_level=logging.WARNING, access_log=False,
                                server_header=False, lifespan="off",
                                limit_concurrency=MAX_CONNECTIONS)
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        service.close()
        sock.close()
