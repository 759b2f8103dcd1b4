from django.apps import AppConfig


class ReconsolidationConfig(AppConfig):
    name = "reconsolidation"
    default_auto_field = "django.db.models.BigAutoField"
