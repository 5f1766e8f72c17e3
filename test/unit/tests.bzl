"""all_tests_listed(): a test that fails when a *Test.cpp of the package is in no target."""

def all_tests_listed():
    native.sh_test(
        name = "AllTestsListed",
        size = "small",
        srcs = ["//test/unit:all_tests_listed.sh"],
        args = [native.package_name()],
        data = native.glob(["*Test.cpp"]) + ["BUILD.bazel"],
    )
