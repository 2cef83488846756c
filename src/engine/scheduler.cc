#include "engine/scheduler.h"

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <span>
#include <utility>
#include <vector>

#include "kernels/thread_pool.h"

namespace verdict::engine {
namespace {

void name_thread(const std::string& model) {
  // Linux thread names hold 15 bytes.
  const std::string name = ("eng:" + model).substr(0, 15);
  pthread_setname_np(pthread_self(), name.c_str());
}

std::size_t bucket_of(int64_t sequences) {
  for (std::size_t b = 0; b < kStepSequenceBuckets.size(); ++b)
    if (sequences <= kStepSequenceBuckets[b]) return b;
  return kStepSequenceBuckets.size();
}

}  // namespace

Scheduler::Scheduler(std::unique_ptr<StepModel> model, SchedulerOptions options)
    : model_(std::move(model)), options_(std::move(options)) {
  if (!model_) throw Error("scheduler needs a model");
  align_ = std::max<int64_t>(1, model_->prefill_alignment());
  gate_ = options_.gate ? options_.gate : ComputeGate::shared();
  if (options_.prefix_cache_bytes > 0 && model_->can_save())
    cache_ = std::make_unique<PrefixCache>(options_.prefix_cache_bytes);
  thread_ = std::thread([this] { run(); });
}

Scheduler::~Scheduler() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void Scheduler::check_tokens(std::span<const TokenId> tokens, const char* what) const {
  if (tokens.empty()) throw Error(std::string("cannot run an empty ") + what);
  const auto n = static_cast<int64_t>(tokens.size());
  if (n > model_->max_tokens())
    throw Error(std::string(what) + " of " + std::to_string(n) + " tokens exceeds the " +
                std::to_string(model_->max_tokens()) + "-token sequence state of model '" + options_.name + "'");
  const int64_t vocab = model_->vocab_size();
  for (TokenId id : tokens)
    if (id < 0 || id >= vocab)
      throw Error("token id " + std::to_string(id) + " is outside the vocabulary of model '" + options_.name +
                  "' (" + std::to_string(vocab) + " ids)");
}

std::shared_ptr<Job> Scheduler::submit(std::vector<TokenId> tokens, std::vector<int64_t> seams) {
  check_tokens(tokens, "record");
  const auto n = static_cast<int64_t>(tokens.size());
  for (std::size_t i = 0; i < seams.size(); ++i)
    if (seams[i] <= 0 || seams[i] >= n || (i > 0 && seams[i] <= seams[i - 1]))
      throw Error("record seams must be ascending positions inside the record (0 < seam < " + std::to_string(n) + ")");
  auto job = std::make_shared<Job>(std::move(tokens), model_->hidden_size(), std::move(seams));
  {
    std::lock_guard lock(mutex_);
    if (stopping_) throw Error("model '" + options_.name + "' is being unloaded");
    if (queue_.size() >= options_.max_queue) {
      ++stats_.jobs_rejected;
      throw QueueFullError("server busy: the queue for model '" + options_.name + "' is full; retry later");
    }
    queue_.push_back(job);
    stats_.pending_tokens += n;
  }
  wake_.notify_one();
  return job;
}

std::shared_ptr<GenerationJob> Scheduler::submit_generation(std::vector<TokenId> prompt,
                                                            std::shared_ptr<TokenSource> source) {
  if (!source) throw Error("a generation needs a token source");
  check_tokens(prompt, "prompt");
  auto job = std::make_shared<GenerationJob>(std::move(prompt), std::move(source));
  {
    std::lock_guard lock(mutex_);
    if (stopping_) throw Error("model '" + options_.name + "' is being unloaded");
    if (gen_queue_.size() >= options_.max_queue) {
      ++stats_.jobs_rejected;
      throw QueueFullError("server busy: the queue for model '" + options_.name + "' is full; retry later");
    }
    gen_queue_.push_back(job);
  }
  wake_.notify_one();
  return job;
}

bool Scheduler::cancel(const std::shared_ptr<GenerationJob>& job) {
  std::lock_guard lock(mutex_);
  if (job->finished()) return false;
  const auto it = std::find(gen_queue_.begin(), gen_queue_.end(), job);
  if (it != gen_queue_.end()) {
    gen_queue_.erase(it);
    end_generation_locked(job, EndReason::kCancelled, "request cancelled before it ran");
    return true;
  }
  job->cancel_requested_.store(true);
  wake_.notify_all();
  return true;
}

bool Scheduler::cancel_queued(const std::shared_ptr<Job>& job) {
  std::lock_guard lock(mutex_);
  const auto it = std::find(queue_.begin(), queue_.end(), job);
  if (it == queue_.end()) return false;
  queue_.erase(it);
  stats_.pending_tokens -= static_cast<int64_t>(job->tokens().size());
  ++stats_.jobs_cancelled;
  job->finish(JobState::kCancelled, {}, "request cancelled before it ran");
  return true;
}

bool Scheduler::cancel(const std::shared_ptr<Job>& job) {
  if (cancel_queued(job)) return true;
  std::lock_guard lock(mutex_);
  if (std::find(active_.begin(), active_.end(), job) == active_.end()) return false;
  job->cancel_requested_.store(true);
  wake_.notify_all();
  return true;
}

SchedulerStats Scheduler::stats() const {
  std::lock_guard lock(mutex_);
  SchedulerStats s = stats_;
  s.queued = queue_.size();
  s.running = active_.size();
  s.generations_queued = gen_queue_.size();
  s.generations_running = gen_active_.size();
  if (cache_) s.prefix_cache = cache_->stats();
  return s;
}

std::optional<double> Scheduler::estimated_wait_seconds() const {
  const SchedulerStats s = stats();
  const double rate = s.tokens_per_second();
  if (rate <= 0) return std::nullopt;
  return static_cast<double>(s.pending_tokens) / rate;
}

// Ends a job the engine holds (running or admitted): frees its slot and wakes its waiter.
void Scheduler::finish_locked(const std::shared_ptr<Job>& job, JobState state, std::string error) {
  if (job->slot_ >= 0) {
    model_->release(job->slot_);
    job->slot_ = -1;
  }
  stats_.pending_tokens -= static_cast<int64_t>(job->tokens().size() - job->done_tokens_);
  if (state == JobState::kDone) ++stats_.jobs_done;
  if (state == JobState::kFailed) ++stats_.jobs_failed;
  if (state == JobState::kCancelled) ++stats_.jobs_cancelled;
  std::vector<float> rows;
  if (state == JobState::kDone) rows = std::move(job->rows_);
  job->rows_ = {};
  job->finish(state, std::move(rows), std::move(error));
  active_.erase(std::find(active_.begin(), active_.end(), job));
}

// Ends a generation the engine holds or held queued: frees its slot, tells its source (unless the
// source finished it: reason nullopt) and drops it.
void Scheduler::end_generation_locked(const std::shared_ptr<GenerationJob>& job, std::optional<EndReason> reason,
                                      const std::string& message) {
  if (job->slot_ >= 0) {
    model_->release(job->slot_);
    job->slot_ = -1;
  }
  if (!reason) ++stats_.generations_done;
  else if (*reason == EndReason::kContextFull) ++stats_.generations_done;
  else if (*reason == EndReason::kCancelled) ++stats_.generations_cancelled;
  else ++stats_.generations_failed;
  job->finished_.store(true);
  if (reason) job->source_->end(*reason, message);
  const auto it = std::find(gen_active_.begin(), gen_active_.end(), job);
  if (it != gen_active_.end()) gen_active_.erase(it);
}

void Scheduler::drop_cancelled_locked() {
  for (std::size_t i = active_.size(); i-- > 0;) {
    const std::shared_ptr<Job> job = active_[i];
    if (job->cancel_requested_.load()) finish_locked(job, JobState::kCancelled, "request cancelled while it ran");
  }
  for (std::size_t i = gen_active_.size(); i-- > 0;) {
    const std::shared_ptr<GenerationJob> job = gen_active_[i];
    if (job->cancel_requested_.load()) end_generation_locked(job, EndReason::kCancelled, "request cancelled while it ran");
  }
}

// Decisions first: their callers block on the answer.
void Scheduler::admit_locked() {
  auto occupied = [&] { return static_cast<int64_t>(active_.size() + gen_active_.size()); };
  while (!queue_.empty() && occupied() < model_->slots()) {
    std::shared_ptr<Job> job = std::move(queue_.front());
    queue_.pop_front();
    job->slot_ = model_->acquire();
    job->done_tokens_ = 0;
    job->rows_.reserve(job->tokens().size() * static_cast<std::size_t>(job->hidden_size()));
    resume_locked(*job);
    job->mark_running();
    active_.push_back(std::move(job));
  }
  while (!gen_queue_.empty() && occupied() < model_->slots()) {
    std::shared_ptr<GenerationJob> job = std::move(gen_queue_.front());
    gen_queue_.pop_front();
    job->slot_ = model_->acquire();
    job->prefilled_ = 0;
    job->length_ = 0;
    job->pending_.reset();
    job->started_.store(true);
    gen_active_.push_back(std::move(job));
  }
}

// A newly admitted record resumes from the longest cached prefix that ends at one of its seams: the
// saved state goes into its slot and the saved rows become its first rows.
void Scheduler::resume_locked(Job& job) {
  if (!cache_ || job.seams().empty()) return;
  const std::shared_ptr<const CachedPrefix> hit = cache_->find(job.tokens(), job.seams());
  if (!hit) return;
  try {
    model_->restore(job.slot_, *hit->state);
  } catch (const std::exception&) {
    // A snapshot this model cannot take back (cannot happen with a consistent model): run it all.
    model_->release(job.slot_);
    job.slot_ = model_->acquire();
    return;
  }
  job.rows_.assign(hit->rows.begin(), hit->rows.end());
  job.done_tokens_ = hit->tokens.size();
  job.cached_tokens_.store(hit->tokens.size());
  stats_.pending_tokens -= static_cast<int64_t>(hit->tokens.size());
}

// The seams of a running record in (done, end] whose prefixes the cache lacks: its state is saved there
// as the step passes them (StepInput::save_at).
std::vector<int64_t> Scheduler::seams_to_save(const Job& job, int64_t end) const {
  std::vector<int64_t> saves;
  if (!cache_) return saves;
  const auto row_bytes = static_cast<std::size_t>(job.hidden_size()) * sizeof(float) + sizeof(TokenId);
  for (int64_t seam : job.seams()) {
    if (seam <= static_cast<int64_t>(job.done_tokens_)) continue;
    if (seam > end) break;
    // An entry larger than the whole cache would not be held: not worth a copy.
    if (model_->snapshot_bytes(seam) + static_cast<std::size_t>(seam) * row_bytes > cache_->capacity_bytes()) break;
    if (!cache_->contains(job.tokens().first(static_cast<std::size_t>(seam)))) saves.push_back(seam);
  }
  return saves;
}

// What one step runs: decision chunks, then one token per decoding generation, then generation
// prefill chunks.
struct Scheduler::StepPlan {
  std::vector<std::shared_ptr<Job>> jobs;
  std::vector<PlannedChunk> chunks;  // per job
  struct Gen {
    std::shared_ptr<GenerationJob> job;
    int64_t tokens = 0;
    bool decode = false;
    bool logits = false;
  };
  std::vector<Gen> gens;
  std::vector<StepInput> inputs;  // jobs, then gens
  int64_t rows() const {
    int64_t n = 0;
    for (const StepInput& in : inputs) n += static_cast<int64_t>(in.tokens.size());
    return n;
  }
};

void Scheduler::plan_locked(StepPlan& plan) {
  std::vector<SequenceWork> work;
  for (const auto& job : active_)
    work.push_back({static_cast<int64_t>(job->done_tokens_), static_cast<int64_t>(job->tokens().size()), job->seams()});
  plan.chunks = plan_step(std::span<const SequenceWork>(work), options_.batch, align_);
  for (const PlannedChunk& c : plan.chunks) {
    const std::shared_ptr<Job>& job = active_[c.sequence];
    plan.jobs.push_back(job);
    StepInput in{job->slot_, job->tokens().subspan(job->done_tokens_, static_cast<std::size_t>(c.tokens)), false};
    in.seams = job->seams();
    job->saves_ = seams_to_save(*job, static_cast<int64_t>(job->done_tokens_) + c.tokens);
    in.save_at = job->saves_;
    plan.inputs.push_back(in);
  }
  for (const auto& job : gen_active_)
    if (job->pending_) plan.gens.push_back({job, 1, true, true});
  int64_t prefill_budget = aligned_chunk(options_.batch.chunk_tokens, align_);
  for (const auto& job : gen_active_) {
    if (job->pending_ || prefill_budget == 0) continue;
    const auto left = static_cast<int64_t>(job->prompt().size() - job->prefilled_);
    const int64_t n = next_piece(left, prefill_budget, align_);
    if (n == 0) continue;
    prefill_budget -= n;
    plan.gens.push_back({job, n, false, n == left});
  }
  for (const StepPlan::Gen& g : plan.gens) {
    const GenerationJob& job = *g.job;
    const std::span<const TokenId> tokens = g.decode ? std::span<const TokenId>(&*job.pending_, 1)
                                                     : job.prompt().subspan(job.prefilled_, static_cast<std::size_t>(g.tokens));
    StepInput in{job.slot_, tokens, g.logits};
    in.decoded = g.decode;
    plan.inputs.push_back(in);
  }
}

// The engine thread, without the lock: progress of the generations of a successful step and their
// next tokens. Jobs that finish are marked; the caller drops them under the lock.
void Scheduler::after_generation_step(StepPlan& plan, const StepOutput& out) {
  const auto vocab = static_cast<std::size_t>(model_->vocab_size());
  std::size_t logits_row = 0;
  std::vector<std::pair<GenerationJob*, std::span<const float>>> asks;  // sources to ask for a token
  for (StepPlan::Gen& g : plan.gens) {
    GenerationJob& job = *g.job;
    job.length_ += g.tokens;
    if (g.decode) job.pending_.reset();
    else job.prefilled_ += static_cast<std::size_t>(g.tokens);
    if (!g.logits) continue;
    const std::span<const float> row(out.logits.data() + logits_row * vocab, vocab);
    ++logits_row;
    if (job.cancel_requested_.load()) continue;  // dropped as cancelled below
    asks.emplace_back(&job, row);
  }
  // Sampling a row of a real vocabulary (248k entries) takes about a millisecond: the streams' sources
  // run side by side on the kernel pool rather than one after another.
  kernels::parallel_for(static_cast<int64_t>(asks.size()), 16.0 * static_cast<double>(vocab), [&](int64_t i) {
    auto& [job, row] = asks[static_cast<std::size_t>(i)];
    job->pending_ = job->source_->next(row);
  });
}

// The engine thread, under the lock, after a step: counters, each record's new rows and the prefixes
// saved on the way (into the cache before the record is handed back, so that its client's next record
// finds them; what the cache lets go goes to `dropped`, freed outside the lock), finished records
// handed back, and the generations' ends.
void Scheduler::finish_step_locked(const StepPlan& plan, const StepOutput& out, const std::string& failure,
                                   double seconds, std::vector<std::shared_ptr<const CachedPrefix>>& dropped) {
  std::size_t asked = 0;
  for (const std::shared_ptr<Job>& job : plan.jobs) asked += job->saves_.size();
  const bool saved = failure.empty() && out.saved.size() == asked;
  std::size_t next_saved = 0;
  ++stats_.steps;
  stats_.busy_seconds += seconds;
  const auto sequences = static_cast<int64_t>(plan.inputs.size());
  stats_.step_sequences += static_cast<uint64_t>(sequences);
  stats_.max_step_sequences = std::max(stats_.max_step_sequences, sequences);
  ++stats_.step_sequence_counts[bucket_of(sequences)];
  std::size_t offset = 0;
  const auto h = static_cast<std::size_t>(model_->hidden_size());
  for (std::size_t i = 0; i < plan.jobs.size(); ++i) {
    const std::shared_ptr<Job>& job = plan.jobs[i];
    const auto n = static_cast<std::size_t>(plan.chunks[i].tokens);
    if (!failure.empty()) {
      finish_locked(job, JobState::kFailed, failure);
      continue;
    }
    stats_.step_tokens += n;
    job->rows_.insert(job->rows_.end(), out.hidden.begin() + static_cast<std::ptrdiff_t>(offset * h),
                      out.hidden.begin() + static_cast<std::ptrdiff_t>((offset + n) * h));
    offset += n;
    job->done_tokens_ += n;
    stats_.pending_tokens -= static_cast<int64_t>(n);
    for (int64_t seam : job->saves_) {
      if (!saved) break;
      auto entry = std::make_shared<CachedPrefix>();
      entry->state = out.saved[next_saved++];
      entry->tokens.assign(job->tokens().begin(), job->tokens().begin() + seam);
      entry->rows.assign(job->rows_.begin(), job->rows_.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(seam) * h));
      cache_->insert(std::move(entry), &dropped);
    }
    job->saves_.clear();
    if (job->done_tokens_ == job->tokens().size()) finish_locked(job, JobState::kDone, "");
  }
  for (const StepPlan::Gen& g : plan.gens) {
    const std::shared_ptr<GenerationJob>& job = g.job;
    if (!failure.empty()) {
      end_generation_locked(job, EndReason::kFailed, failure);
      continue;
    }
    stats_.step_tokens += static_cast<uint64_t>(g.tokens);
    if (!g.decode) stats_.prompt_tokens += static_cast<uint64_t>(g.tokens);
    if (!g.logits || job->cancel_requested_.load()) continue;
    ++stats_.generated_tokens;  // the source sampled one token from this row
    if (!job->pending_) {
      end_generation_locked(job, std::nullopt, "");
    } else if (job->length_ >= model_->max_tokens()) {
      end_generation_locked(job, EndReason::kContextFull, "the context is full");
    }
  }
}

void Scheduler::run() {
  name_thread(options_.name);
  StepOutput out;
  for (;;) {
    StepPlan plan;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] {
        return stopping_ || !queue_.empty() || !active_.empty() || !gen_queue_.empty() || !gen_active_.empty();
      });
      if (stopping_) break;
      drop_cancelled_locked();
      try {
        admit_locked();
      } catch (const std::exception&) {
        // No free slot although fewer jobs than slots run: cannot happen with a consistent model;
        // run what holds a slot and retry admission next step.
      }
      plan_locked(plan);
      if (plan.inputs.empty()) continue;
    }

    // The forward pass runs without the lock: submitters and cancellers are never blocked by it.
    // Only this thread touches slots, progress and rows of running jobs.
    std::string failure;
    double seconds = 0;
    try {
      GateHold hold(*gate_, plan.jobs.empty() ? StepPriority::kGeneration : StepPriority::kDecision);
      const auto t0 = std::chrono::steady_clock::now();  // the step's compute time, not its wait at the gate
      model_->forward(plan.inputs, out);
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const int64_t rows = plan.rows();
      if (out.hidden.size() != static_cast<std::size_t>(rows * model_->hidden_size()))
        throw Error("forward step returned " + std::to_string(out.hidden.size()) + " values for " + std::to_string(rows) +
                    " rows of hidden size " + std::to_string(model_->hidden_size()));
      std::size_t logit_rows = 0;
      for (const StepInput& in : plan.inputs) logit_rows += in.last_logits ? 1 : 0;
      if (out.logits.size() != logit_rows * static_cast<std::size_t>(model_->vocab_size()))
        throw Error("forward step returned " + std::to_string(out.logits.size()) + " logits for " +
                    std::to_string(logit_rows) + " rows of vocabulary size " + std::to_string(model_->vocab_size()));
    } catch (const std::exception& e) {
      failure = std::string("forward step failed: ") + e.what();
    }
    if (failure.empty()) after_generation_step(plan, out);

    std::vector<std::shared_ptr<const CachedPrefix>> dropped;  // evicted by this step's saves: freed below
    {
      std::lock_guard lock(mutex_);
      finish_step_locked(plan, out, failure, seconds, dropped);
    }
  }

  // Stopping: nothing may be left waiting forever.
  std::lock_guard lock(mutex_);
  while (!active_.empty()) finish_locked(active_.back(), JobState::kCancelled, "model '" + options_.name + "' was unloaded");
  for (const auto& job : queue_) {
    ++stats_.jobs_cancelled;
    job->finish(JobState::kCancelled, {}, "model '" + options_.name + "' was unloaded");
  }
  queue_.clear();
  while (!gen_active_.empty()) end_generation_locked(gen_active_.back(), EndReason::kCancelled, "model '" + options_.name + "' was unloaded");
  for (const auto& job : gen_queue_) end_generation_locked(job, EndReason::kCancelled, "model '" + options_.name + "' was unloaded");
  gen_queue_.clear();
  stats_.pending_tokens = 0;
}

}  // namespace verdict::engine
