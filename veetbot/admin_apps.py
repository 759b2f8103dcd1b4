"""Django admin configured to use the staff site as ``admin.site``.

Making it the *default* site (rather than a second one) means every ``admin.register``
anywhere in the project lands on the staff site and runs inside the staff context, and
owner models cannot be registered with a writable ModelAdmin by accident. Kept apart
from ``veetbot.admin`` because INSTALLED_APPS imports this module before models load.
"""
from django.contrib.admin.apps import AdminConfig


class StaffAdminConfig(AdminConfig):
    default_site = "veetbot.admin.StaffAdminSite"
