"""The private storage of uploads and per-example terms, looked up at every call."""

from django.core.files.storage import Storage, storages


class PrivateStorage(Storage):
    """Every call goes to ``storages["private"]`` as configured at that moment.

    A FileField evaluates its storage callable once, when the model class loads. Returning
    ``storages["private"]`` itself would build the backend at start-up (before a missing
    backend package can be reported where it is used) and pin it for good, ignoring later
    settings such as each test's own folders. This stand-in forwards instead.
    """

    @staticmethod
    def target() -> Storage:
        return storages["private"]

    def open(self, name, mode="rb"):
        return self.target().open(name, mode)

    def save(self, name, content, max_length=None):
        return self.target().save(name, content, max_length=max_length)

    def generate_filename(self, filename):
        return self.target().generate_filename(filename)

    def get_valid_name(self, name):
        return self.target().get_valid_name(name)

    def get_available_name(self, name, max_length=None):
        return self.target().get_available_name(name, max_length=max_length)

    def path(self, name):
        return self.target().path(name)

    def delete(self, name):
        return self.target().delete(name)

    def exists(self, name):
        return self.target().exists(name)

    def listdir(self, path):
        return self.target().listdir(path)

    def size(self, name):
        return self.target().size(name)

    def url(self, name):
        return self.target().url(name)

    def get_accessed_time(self, name):
        return self.target().get_accessed_time(name)

    def get_created_time(self, name):
        return self.target().get_created_time(name)

    def get_modified_time(self, name):
        return self.target().get_modified_time(name)


PRIVATE_STORAGE = PrivateStorage()


def private_storage():
    return PRIVATE_STORAGE
