from django.apps import AppConfig


class VeetbotConfig(AppConfig):
    name = "veetbot"
    verbose_name = "Veetbot project"
