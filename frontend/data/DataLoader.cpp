// The DataLoader: per-epoch order, batch assembly, and the worker threads that prefetch.
#include "kiln/data/DataLoader.h"

#include <atomic>
#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "kiln/core/Autograd.h"
#include "kiln/core/Dispatcher.h"
#include "kiln/core/Ops.h"

namespace kiln::data {

namespace {

constexpr std::string_view kOp = "data::DataLoader";

// The dataset indices epoch `epoch` visits: the sampler's, or the loader's own order.
std::vector<size_t> epochOrder(const Dataset& dataset, const DataLoaderOptions& options,
                               uint64_t epoch) {
  if (options.sampler()) return options.sampler()->indices(dataset.size(), epoch);
  return detail::visitOrder(dataset.size(), options.shuffle(), options.seed() + epoch);
}

// Examples stacked along dim 0; targets too, unless every one is undefined.
Batch stackExamples(const std::vector<Example<>>& examples, const SourceLoc& loc) {
  std::vector<Tensor> data, targets;
  for (const Example<>& e : examples) {
    data.push_back(e.data);
    if (e.target.defined()) targets.push_back(e.target);
  }
  if (!targets.empty() && targets.size() != examples.size())
    throw Error::make(loc, kOp, "some examples of a batch have a target and some do not");
  return {stack(data, 0, loc), targets.empty() ? Tensor() : stack(targets, 0, loc)};
}

}  // namespace

// One pass over the dataset. Workers claim batch indices in order and file what they made
// (or the exception it raised) under its index; the loop takes them in order. At most
// workers * prefetch batches are claimed beyond the one the loop waits for.
class DataLoader::Epoch {
 public:
  Epoch(std::shared_ptr<Dataset> dataset, const DataLoaderOptions& options, uint64_t epoch,
        const SourceLoc& loc)
      : dataset_(std::move(dataset)),
        options_(options),
        epoch_(epoch),
        loc_(loc),
        order_(epochOrder(*dataset_, options, epoch)),
        numBatches_(batchCount(order_.size(), options)) {
    try {
      for (size_t w = 0; w < options_.workers() && w < numBatches_; ++w)
        workers_.emplace_back([this] { workerLoop(); });
    } catch (...) {
      stop();  // no thread may outlive a failed constructor
      throw;
    }
  }

  ~Epoch() { stop(); }

  static size_t batchCount(size_t examples, const DataLoaderOptions& options) {
    return options.drop_last() ? examples / options.batch_size()
                               : (examples + options.batch_size() - 1) / options.batch_size();
  }

  bool done() const { return done_; }
  Batch& current() { return current_; }

  // Makes the next batch current; at the end, marks the epoch done. What the batch
  // raised is rethrown after ending the epoch.
  void advance() {
    if (done_) return;
    if (next_ == numBatches_) {
      finish();
      return;
    }
    try {
      Batch batch = workers_.empty() ? assemble(next_) : takeFinished();
      {
        std::lock_guard lock(mutex_);
        ++next_;
      }
      taken_.notify_all();
      current_ = std::move(batch);
    } catch (...) {
      finish();
      throw;
    }
  }

 private:
  struct Finished {
    Batch batch;
    std::exception_ptr error;
  };

  Batch assemble(size_t b) const {
    DispatchHookGuard untraced(nullptr);  // data loading is never part of a trace
    NoGradGuard noGrad;
    const size_t begin = b * options_.batch_size();
    const size_t end = std::min(begin + options_.batch_size(), order_.size());
    std::vector<Example<>> examples;
    examples.reserve(end - begin);
    for (size_t i = begin; i < end; ++i) {
      if (stopping_.load(std::memory_order_relaxed)) return {};  // unwanted now
      const size_t index = order_[i];
      Example<> example = dataset_->get(index);
      if (options_.transform()) example = options_.transform()(std::move(example), SampleKey{epoch_, index});
      examples.push_back(std::move(example));
    }
    return stackExamples(examples, loc_);
  }

  Batch takeFinished() {
    Finished finished;
    {
      std::unique_lock lock(mutex_);
      filed_.wait(lock, [&] { return finished_.contains(next_); });
      auto it = finished_.find(next_);
      finished = std::move(it->second);
      finished_.erase(it);
    }
    if (finished.error) std::rethrow_exception(finished.error);
    return std::move(finished.batch);
  }

  void workerLoop() {
    const size_t window = options_.workers() * options_.prefetch();
    while (true) {
      size_t b;
      {
        std::unique_lock lock(mutex_);
        taken_.wait(lock, [&] {
          return stopping_ || claimed_ == numBatches_ || claimed_ < next_ + window;
        });
        if (stopping_ || claimed_ == numBatches_) return;
        b = claimed_++;
      }
      Finished finished;
      try {
        finished.batch = assemble(b);
      } catch (...) {
        finished.error = std::current_exception();
      }
      {
        std::lock_guard lock(mutex_);
        if (finished.error) claimed_ = numBatches_;  // the epoch ends at this batch
        finished_.emplace(b, std::move(finished));
      }
      filed_.notify_all();
    }
  }

  void finish() {
    stop();
    done_ = true;
    current_ = {};
  }

  void stop() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    taken_.notify_all();
    for (std::thread& worker : workers_) worker.join();
    workers_.clear();
  }

  const std::shared_ptr<Dataset> dataset_;
  const DataLoaderOptions options_;
  const uint64_t epoch_;
  const SourceLoc loc_;
  const std::vector<size_t> order_;  // dataset indices in visiting order
  const size_t numBatches_;

  // The batch advance() makes current next: written by the loop's thread under mutex_.
  size_t next_ = 0;
  Batch current_;
  bool done_ = false;

  std::mutex mutex_;
  std::condition_variable filed_;  // a worker filed a batch
  std::condition_variable taken_;  // the loop took one, or the epoch is stopping
  std::atomic<bool> stopping_ = false;
  size_t claimed_ = 0;  // batches handed to workers so far
  std::map<size_t, Finished> finished_;
  std::vector<std::thread> workers_;
};

DataLoader::DataLoader(std::shared_ptr<Dataset> dataset, DataLoaderOptions options,
                       const SourceLoc& loc)
    : dataset_(std::move(dataset)), options_(std::move(options)), loc_(loc) {
  if (!dataset_) throw Error::make(loc, kOp, "got no dataset (a null pointer)");
  if (options_.batch_size() == 0) throw Error::make(loc, kOp, "batch_size must be at least 1");
  if (options_.sampler() && options_.shuffle())
    throw Error::make(loc, kOp, "shuffle and a sampler exclude each other (the sampler orders ",
                      "the epoch; DistributedSampler shuffles itself)");
  if (options_.workers() > 0 && options_.prefetch() == 0)
    throw Error::make(loc, kOp, "prefetch must be at least 1 when workers is ",
                      options_.workers());
}

DataLoader::~DataLoader() = default;
DataLoader::DataLoader(DataLoader&&) noexcept = default;
DataLoader& DataLoader::operator=(DataLoader&&) noexcept = default;

DataLoader::Iterator DataLoader::begin() {
  epoch_.reset();  // ends (and joins) an epoch still running
  epoch_ = std::make_unique<Epoch>(dataset_, options_, nextEpoch_++, loc_);
  epoch_->advance();
  return Iterator(epoch_.get());
}

DataLoader::Iterator DataLoader::end() { return Iterator(); }

size_t DataLoader::size() const {
  const size_t examples =
      options_.sampler() ? options_.sampler()->size(dataset_->size()) : dataset_->size();
  return Epoch::batchCount(examples, options_);
}

Batch& DataLoader::Iterator::operator*() const { return epoch_->current(); }

DataLoader::Iterator& DataLoader::Iterator::operator++() {
  epoch_->advance();
  return *this;
}

bool DataLoader::Iterator::atEnd() const { return epoch_ == nullptr || epoch_->done(); }

}  // namespace kiln::data
