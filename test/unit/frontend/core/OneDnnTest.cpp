// The shared oneDNN helpers: the LRU map, strided descriptions, and the reordered-weights
// cache's keys (storage identity, version, offset, layout).
#include <omp.h>

#include <set>

#include <gtest/gtest.h>

#include "frontend/core/kernels/OneDnn.h"
#include "kiln/core/Autograd.h"
#include "kiln/core/Ops.h"
#include "kiln/core/ThreadPool.h"
#include "test/unit/frontend/core/TestTensors.h"

namespace kiln {
namespace {

namespace onednn = kernels::onednn;
using dnnl::memory;
using kiln::testing::ramp;

// oneDNN's OpenMP primitives size their teams from the calling thread's OpenMP default;
// Kiln's ops that call oneDNN set it to Kiln's thread count first, so KILN_NUM_THREADS and
// set_num_threads govern matmul, conv2d and pooling as they do parallelFor.
TEST(OneDnnThreads, FollowKilnsThreadCount) {
  const int kilnBefore = get_num_threads(), ompBefore = omp_get_max_threads();
  Tensor a = ones({64, 64}), x = ones({2, 4, 8, 8}), w = ones({4, 4, 3, 3});
  omp_set_num_threads(4);
  set_num_threads(1);
  Tensor c = matmul(a, a);
  EXPECT_EQ(omp_get_max_threads(), 1) << "after matmul";
  set_num_threads(3);
  Tensor y = conv2d(x, w, Tensor(), {1}, {1});
  EXPECT_EQ(omp_get_max_threads(), 3) << "after conv2d";
  set_num_threads(2);
  Tensor p = max_pool2d(x, {2, 2});
  EXPECT_EQ(omp_get_max_threads(), 2) << "after max_pool2d";
  EXPECT_EQ(c.data_ptr<float>()[0], 64.0f);
  EXPECT_EQ(y.sizes(), (Shape{2, 4, 8, 8}));
  EXPECT_EQ(p.sizes(), (Shape{2, 4, 4, 4}));
  set_num_threads(kilnBefore);
  omp_set_num_threads(ompBefore);
}

TEST(LruCache, EvictsTheLeastRecentlyUsed) {
  onednn::LruCache<int, int> cache(2);
  cache.put(1, 10);
  cache.put(2, 20);
  ASSERT_NE(cache.find(1), nullptr);  // 2 is now the oldest
  cache.put(3, 30);
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.find(2), nullptr);
  EXPECT_EQ(*cache.find(1), 10);
  EXPECT_EQ(*cache.find(3), 30);
}

TEST(LruCache, PutReplacesTheValueOfAnExistingKey) {
  onednn::LruCache<int, int> cache(4);
  cache.put(1, 10);
  cache.put(1, 11);
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(*cache.find(1), 11);
  EXPECT_EQ(cache.total([](int v) { return size_t(v); }), 11u);
  EXPECT_TRUE(cache.popOldest());
  EXPECT_FALSE(cache.popOldest());
}

TEST(StridedDesc, DescribesViewsButNotBroadcasts) {
  Tensor t = ramp({2, 3, 4, 5}).permute({0, 2, 1, 3});
  std::optional<memory::desc> d = onednn::stridedDesc(t.sizes(), t.strides());
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->data.format_desc.blocking.strides[1], 5);
  EXPECT_EQ(d->data.format_desc.blocking.strides[2], 20);
  Tensor b = ramp({1, 3, 1, 1}).expand({2, 3, 4, 5});
  EXPECT_FALSE(onednn::stridedDesc(b.sizes(), b.strides()).has_value());
  // A dim of size 1 reads the same elements whatever its stride says.
  Tensor a = ramp({3, 1, 4}), c = ramp({3, 4}).unsqueeze(1);
  EXPECT_TRUE(*onednn::stridedDesc(a.sizes(), a.strides()) == *onednn::stridedDesc(c.sizes(), c.strides()));
}

// OIHW [16, 8, 3, 3] into oneDNN's blocked OIhw16i16o.
memory::desc plainOf(const Tensor& w) { return *onednn::stridedDesc(w.sizes(), w.strides()); }
memory::desc blockedOf(const Tensor& w) {
  return memory::desc(w.sizes(), memory::data_type::f32, memory::format_tag::OIhw16i16o);
}

// The reordered values read back in plain OIHW.
Tensor readBack(const memory& m, const Shape& shape) {
  Tensor out = empty(shape);
  memory to(memory::desc(shape, memory::data_type::f32, memory::format_tag::oihw), onednn::engine(),
            out.rawData());
  onednn::makeReorder(m.get_desc(), to.get_desc()).run({{DNNL_ARG_FROM, m}, {DNNL_ARG_TO, to}});
  return out;
}

void expectSameValues(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(amax(abs(sub(a, b))).item<double>(), 0.0);
}

TEST(ReorderedWeights, HitsUntilAnInPlaceWriteBumpsTheVersion) {
  Tensor w = ramp({16, 8, 3, 3}, kFloat32, -1, 0.001);
  const auto before = onednn::weightCacheStats();
  memory first = onednn::reorderedWeights(w, plainOf(w), blockedOf(w));
  memory second = onednn::reorderedWeights(w, plainOf(w), blockedOf(w));
  auto after = onednn::weightCacheStats();
  EXPECT_EQ(after.misses - before.misses, 1u);
  EXPECT_EQ(after.hits - before.hits, 1u);
  EXPECT_EQ(first.get_data_handle(), second.get_data_handle());
  expectSameValues(readBack(second, w.sizes()), w);

  w.narrow(0, 3, 1).fill_(7.0);  // through a view: the shared storage's version moves
  memory third = onednn::reorderedWeights(w, plainOf(w), blockedOf(w));
  EXPECT_EQ(onednn::weightCacheStats().misses - after.misses, 1u);
  expectSameValues(readBack(third, w.sizes()), w);
}

TEST(ReorderedWeights, TellsViewsOfOneStorageApartByOffsetAndStrides) {
  Tensor base = ramp({2, 16, 16, 3, 3}, kFloat32, 0, 0.01);
  Tensor a = base.narrow(0, 0, 1).squeeze(0), b = base.narrow(0, 1, 1).squeeze(0), t = a.transpose(0, 1);
  for (const Tensor& v : {a, b, t, a})
    expectSameValues(readBack(onednn::reorderedWeights(v, plainOf(v), blockedOf(v)), v.sizes()), v);
}

TEST(ReorderedWeights, NeverServesADeadStorageToANewOneAtTheSameAddress) {
  // 1 MiB and up: Storage's allocator hands freed blocks of this size to later tensors,
  // which then have the address, offset and version (0) of a dead one.
  const Shape shape{256, 128, 3, 3};
  std::set<void*> seen;
  int reused = 0;
  for (int i = 0; i < 6; ++i) {
    Tensor w = full(shape, double(i));
    reused += !seen.insert(w.rawData()).second;
    expectSameValues(readBack(onednn::reorderedWeights(w, plainOf(w), blockedOf(w)), shape), w);
  }
  if (reused == 0) GTEST_LOG_(INFO) << "the allocator never reused a block";
}

TEST(ReorderedWeights, StaysBounded) {
  for (int i = 0; i < 100; ++i) {
    Tensor w = full({16, 16, 1, 1}, double(i));
    onednn::reorderedWeights(w, plainOf(w), blockedOf(w));
  }
  EXPECT_LE(onednn::weightCacheStats().entries, 64u);
}

}  // namespace
}  // namespace kiln
