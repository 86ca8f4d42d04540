"""mkdocs-macros' module: a macro of the project's own."""


def define_env(env):
    @env.macro
    def shout(text: str) -> str:
        return text.upper() + "!"
