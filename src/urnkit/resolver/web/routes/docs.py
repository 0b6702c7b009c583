"""``/docs``, the API's interactive documentation (Swagger UI), and ``/static``, the pages'
stylesheet and scripts. The resolver serves all of it: the page (``templates/docs.html``), its
initialisation (``static/docs.js``) and Swagger UI's files, which the fastapi-offline package
ships (``/static/swagger-ui/``); so ``/docs`` works offline, loads nothing from a CDN and runs
under the pages' Content-Security-Policy, which allows no inline script. ``/logo`` is the
operator's logo (setting ``site_logo``), if one is set."""

from fastapi import APIRouter, Request, Response
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException

from urnkit.resolver.web.templating import html_page

router = APIRouter(include_in_schema=False)
router.mount(
    "/static/swagger-ui",
    StaticFiles(packages=[("fastapi_offline", "static")]),
    name="swagger-ui",
)
router.mount("/static", StaticFiles(packages=[("urnkit.resolver", "static")]), name="static")


@router.get("/docs", response_class=HTMLResponse)
def docs(request: Request) -> HTMLResponse:
    """Swagger UI over ``/openapi.json``."""
    return html_page(request, "docs.html")


@router.get("/logo")
def logo(request: Request) -> Response:
    """The logo the settings name (``site_logo``), read at start-up; 404 without one."""
    image = request.app.state.site.logo
    if image is None:
        raise HTTPException(404, "no logo is set (site_logo)")
    return Response(image[0], media_type=image[1])
