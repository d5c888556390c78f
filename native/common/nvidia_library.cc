#include "nvidia_library.h"

#include "dynlib.h"

namespace trtn {

static std::vector<std::string> Candidates(const NvidiaLibrarySpec& spec) {
  std::string override = GetEnv(spec.envVar);
  if (!override.empty()) return {override};
  std::vector<std::string> names = spec.sonames;
  if (spec.toolkitDirs) {
    // Toolkit installs often leave lib64 out of the loader's search path.
    std::vector<std::string> roots;
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
      std::string root = GetEnv(var);
      if (!root.empty()) roots.push_back(root);
    }
    roots.push_back("/usr/local/cuda");
    for (const auto& root : roots) {
      for (const auto& soname : spec.sonames) names.push_back(root + "/lib64/" + soname);
    }
  }
  return names;
}

NvidiaLibrary OpenNvidiaLibrary(const NvidiaLibrarySpec& spec, NativeError* error) {
  std::vector<std::string> failures;
  OpenedLibrary lib = OpenFirstLibrary(Candidates(spec), &failures);
  if (lib.handle == nullptr) {
    std::string message = std::string("The NVIDIA library ") + spec.name + " could not be loaded. Tried:";
    for (const auto& failure : failures) message += "\n  - " + failure;
    message += "\n" + std::string(spec.installHint) + " Or set " + spec.envVar + " to its full path.";
    *error = NativeError{"E_CUDA_LIBRARY_MISSING", message, {{"library", spec.name}, {"envVar", spec.envVar}}, {},
                         {{"tried", failures}}};
    return {};
  }
  return NvidiaLibrary{lib.handle, lib.name};
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string list;
  for (const auto& name : names) list += (list.empty() ? "" : ", ") + name;
  return list;
}

NativeError LibraryUnusable(const NvidiaLibrarySpec& spec, const std::string& path, const std::string& why) {
  return NativeError{"E_CUDA_LIBRARY_MISSING",
                     std::string("The NVIDIA library ") + spec.name + " at " + path + " cannot be used: " + why + ". " +
                         spec.installHint + " Or set " + spec.envVar + " to another copy.",
                     {{"library", spec.name}, {"path", path}, {"envVar", spec.envVar}},
                     {},
                     {}};
}

}  // namespace trtn
