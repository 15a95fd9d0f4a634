"""``/cdx``: the wayback CDX server API over our captures (``web.cdx_server``),
for the tools of web archives and the original crawler's CDX client. Behind
the same Host and token checks as every page (``app.Guard``). A query that
cannot be answered is a 400 with one line saying why; the database failing
is a 503."""

from __future__ import annotations

import logging

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from sandcrawler.app.services import Services
from sandcrawler.core.errors import InfrastructureError
from sandcrawler.web.archive.cdx_server import CdxQuery, CdxQueryError, render, run_query

log = logging.getLogger(__name__)


def route(services: Services) -> Route:
    def cdx(request: Request) -> Response:
        try:
            query = CdxQuery.parse(request.query_params.multi_items())
            body, media = render(query, run_query(services.engine, query))
        except CdxQueryError as e:
            return PlainTextResponse(f"400 Bad Request: {e}\n", 400)
        except InfrastructureError as e:
            log.warning("/cdx: %s", e)
            return PlainTextResponse(f"503 Service Unavailable: {e}\n", 503)
        return Response(body, media_type=media)

    return Route("/cdx", cdx)
