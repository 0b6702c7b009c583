"""The application's routes, an :class:`~fastapi.APIRouter` per area; ``create_app`` adds them
in the order of :data:`urnkit.resolver.web.app.ROUTERS`, which is /openapi.json's order."""
