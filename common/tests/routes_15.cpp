// Every route a launch of step 15 can take (tile_per_shape.hpp: Route) is taken by some case of the
// GPU tests (test_cases.hpp) with packed operands and by some case with strided ones, so that each
// route's results are checked value by value on a GPU. Which route a case takes is decided on the
// host from its shape and strides alone (the tests' allocations start on 256 bytes): this test needs
// no GPU, and fails on any machine when a route loses its last case.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "sm90/tile_per_shape.hpp"
#include "test_cases.hpp"

using namespace worklog;
using namespace worklog::testing;
using tile_per_shape::Route;

TEST_CASE("every route of 14 is value-checked by the GPU tests, packed and strided") {
  std::map<Route, int> packed_cases, strided_cases;
  for (const Case& c : test_cases()) {
    const Route route = tile_per_shape::route_of(c.shape, resolve_strides(c.shape, c.strides), true);
    ++(packed(c.shape, c.strides) ? packed_cases : strided_cases)[route];
  }
  for (const Route route : tile_per_shape::all_routes) {
    CAPTURE(std::string(tile_per_shape::route_name(route)));
    const std::string counts = std::string(tile_per_shape::route_name(route)) + ": " +
                               std::to_string(packed_cases[route]) + " packed case(s), " +
                               std::to_string(strided_cases[route]) + " strided";
    MESSAGE(counts);
    CHECK_MESSAGE(packed_cases[route] > 0, "no case with packed operands takes this route");
    CHECK_MESSAGE(strided_cases[route] > 0, "no case with strided operands takes this route");
  }
}

TEST_CASE("the routes are decided in the launch's order") {
  const auto route = [](Shape s, Strides t = {}, bool aligned = true) {
    return tile_per_shape::route_of(s, resolve_strides(s, t), aligned);
  };
  CHECK(route({1, 1, 1 << 20}) == Route::pass_over_a);           // a dot product
  CHECK(route({4096, 1, 4096}) == Route::pass_over_a);           // one column, however many rows
  CHECK(route({4097, 3, 65}) != Route::pass_over_a);             // 3 columns of many rows: M·N too large
  CHECK(route({46341, 46341, 17}) == Route::tiny_k);             // K ≤ 32
  CHECK(route({512, 512, 512}) == Route::small_problem);         // every side ≤ 512
  CHECK(route({4096, 4097, 4096}) == Route::padded);             // N odd: no TMA store of C
  CHECK(route({4096, 4096, 4096}, {}, false) == Route::padded);  // an operand off 16 bytes
  CHECK(route({128, 4096, 4096}) == Route::few_rows);
  CHECK(route({129, 4096, 4096}) == Route::menu);
}
