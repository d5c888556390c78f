// Compiled only by the declaration checks (never into the addon). NVIDIA's headers type status
// codes and attribute selectors as enums where our declarations use int; Norm<T> replaces every
// enum (inside pointers, const and function signatures too) by int, so a signature of ours and
// the header's compare equal exactly when they agree up to that substitution. Our by-value
// structs are mapped to the header's with a Norm specialization in each check file.
#pragma once

#include <string_view>
#include <type_traits>

namespace trtn::check {

template <typename T>
struct Norm {
  using type = std::conditional_t<std::is_enum_v<T>, int, T>;
};
template <typename T>
struct Norm<T*> {
  using type = typename Norm<T>::type*;
};
template <typename T>
struct Norm<const T> {
  using type = const typename Norm<T>::type;
};
template <typename R, typename... A>
struct Norm<R (*)(A...)> {
  using type = typename Norm<R>::type (*)(typename Norm<A>::type...);
};

template <typename Ours, typename Theirs>
constexpr bool kSameSignature = std::is_same_v<typename Norm<Ours>::type, typename Norm<Theirs>::type>;

}  // namespace trtn::check

#define TRTN_STRINGIFY2(x) #x
// The name a header macro expands to (e.g. cuMemGetInfo → "cuMemGetInfo_v2").
#define TRTN_EXPANDED_NAME(x) std::string_view(TRTN_STRINGIFY2(x))
