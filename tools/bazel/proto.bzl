"""lite_grpc_library: protobuf + gRPC C++ code generation with Debian's protoc.

Usage, in the BUILD file of the directory that is the proto import root:

    load("//tools/bazel:proto.bzl", "lite_grpc_library")
    lite_grpc_library(
        name = "manager_grpc",
        srcs = ["lite/v1/manager.proto", "lite/v1/types.proto"],
    )

C++ code then includes "lite/v1/manager.grpc.pb.h" and depends on ":manager_grpc".
Imports between the listed files resolve against this package's directory;
Google's well-known types resolve against /usr/include.
"""

load("@rules_cc//cc:defs.bzl", "cc_library")

_PROTOC = "/usr/bin/protoc"
_GRPC_PLUGIN = "/usr/bin/grpc_cpp_plugin"

def lite_grpc_library(name, srcs, deps = [], grpc = True, visibility = None):
    root = native.package_name()
    stems = [src[:-len(".proto")] for src in srcs]
    hdrs = [s + ".pb.h" for s in stems]
    cc_srcs = [s + ".pb.cc" for s in stems]
    if grpc:
        hdrs += [s + ".grpc.pb.h" for s in stems]
        cc_srcs += [s + ".grpc.pb.cc" for s in stems]

    out_dir = "$(GENDIR)/" + root if root else "$(GENDIR)"
    cmd = "%s -I%s -I/usr/include --cpp_out=%s" % (_PROTOC, root or ".", out_dir)
    if grpc:
        cmd += " --grpc_out=%s --plugin=protoc-gen-grpc=%s" % (out_dir, _GRPC_PLUGIN)
    cmd += " $(SRCS)"

    native.genrule(
        name = name + "_codegen",
        srcs = srcs,
        outs = hdrs + cc_srcs,
        cmd = cmd,
        message = "protoc %s" % name,
    )
    cc_library(
        name = name,
        srcs = cc_srcs,
        hdrs = hdrs,
        includes = ["."],
        copts = ["-Wno-unused-parameter"],
        deps = deps + ["//tools/bazel:grpc" if grpc else "//tools/bazel:protobuf"],
        visibility = visibility,
    )
