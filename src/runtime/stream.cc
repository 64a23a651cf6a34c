// Batched command recording and submission on one timeline semaphore.
#include "stream_impl.h"

#include "host_allocator.h"

namespace vkml {

using namespace stream_detail;

Stream::Stream(Device& device) : impl_(std::make_unique<Impl>(device, device.vk())) {
  auto& vk = impl_->vk;
  VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pi.queueFamilyIndex = vk.queue_family;
  VKML_VK_CHECK(vk::vkCreateCommandPool(vk.device, &pi, nullptr, &impl_->pool));
  VkSemaphoreTypeCreateInfo st{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
  st.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  VkSemaphoreCreateInfo si{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
  si.pNext = &st;
  VKML_VK_CHECK(vk::vkCreateSemaphore(vk.device, &si, nullptr, &impl_->timeline));
  if (device.caps().timestamps) {
    VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qi.queryCount = kTimestampQueries;
    VKML_VK_CHECK(vk::vkCreateQueryPool(vk.device, &qi, nullptr, &impl_->queries));
  }
  const Config& cfg = config();
  impl_->batch_limit = static_cast<uint32_t>(cfg.batch_size);
  if (cfg.profile > 0 && device.caps().timestamps) {
    impl_->profiler.enable(impl_->vk.device, impl_->batch_limit, device.caps().timestamp_period_ns);
  }
  impl_->spin_us = static_cast<uint32_t>(cfg.sync_spin_us);
  impl_->cost_limit = static_cast<uint64_t>(cfg.submit_cost);
  // Ramping overlaps recording with a GPU's work; a CPU device shares the host's cores instead.
  impl_->ramp = cfg.submit_ramp == "auto" ? device.caps().kind != DeviceKind::kCpu
                                          : cfg.submit_ramp == "1";
  impl_->ramp_submissions = &ramp_submissions_;
  impl_->submissions = &submissions_;
  impl_->pipeline_wait_ns = &pipeline_wait_ns_;
  impl_->cost_submissions = &cost_submissions_;
  impl_->slice_cost = &slice_cost_;
  // No budget by default on CPU devices: they drive no display and have no watchdog.
  const int64_t budget = cfg.submit_budget_ms == kConfigAuto
                             ? (device.caps().kind == DeviceKind::kCpu ? 0 : 100)
                             : cfg.submit_budget_ms;
  impl_->set_budget(static_cast<double>(budget));
}

Stream::~Stream() {
  auto& vk = impl_->vk;
  try {
    synchronize();
  } catch (...) {
  }
  for (auto& s : impl_->staging) vk.destroy_buffer(s.raw);
  for (auto& s : impl_->params_chunks) vk.destroy_buffer(s.raw);
  if (impl_->queries) vk::vkDestroyQueryPool(vk.device, impl_->queries, nullptr);
  impl_->clock.disable(vk.device);
  vk::vkDestroySemaphore(vk.device, impl_->timeline, nullptr);
  vk::vkDestroyCommandPool(vk.device, impl_->pool, nullptr);
}

void Stream::dispatch(const Pipeline& p, uint32_t gx, uint32_t gy, uint32_t gz, const void* push,
                      uint32_t push_bytes, std::span<const MemRange> reads,
                      std::span<const MemRange> writes, uint64_t cost) {
  std::lock_guard<std::mutex> lock(mu_);
  impl_->consume_params();  // first: an empty or refused dispatch still ends its params' wait
  impl_->vk.check_alive();
  if (gx == 0 || gy == 0 || gz == 0) return;
  const auto& maxc = impl_->dev.caps().max_workgroup_count;
  if (gx > maxc[0] || gy > maxc[1] || gz > maxc[2]) {
    throw InvalidArgument("vkml: dispatch of " + std::to_string(gx) + "x" + std::to_string(gy) +
                          "x" + std::to_string(gz) + " workgroups exceeds the device limit");
  }
  if (push_bytes > kPushConstantBytes) throw InvalidArgument("vkml: push constants too large");
  if (cost == 0) {
    cost = uint64_t{gx} * gy * gz * std::max<uint32_t>(p.local_size_x, 1);
  } else {
    impl_->declared_in_current += cost;
  }
  bool profiling = impl_->profiler.enabled();
  const bool holding = impl_->record_ready_held();
  if (!profiling && (holding || !p.ready())) {
    // Held until its pipeline is built (Impl::record_held); the hazard is decided now, in order.
    Impl::Command d{Impl::Command::Kind::kDispatch, impl_->hazard(reads, writes), &p, gx, gy, gz,
                    push_bytes};
    if (d.barrier_before) barriers_++;
    if (push_bytes) std::memcpy(d.push.data(), push, push_bytes);
    impl_->held.push_back(d);
  } else {
    VkCommandBuffer cb = impl_->begin();
    if (impl_->order(reads, writes)) barriers_++;
    if (profiling) {
      impl_->barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT);
      impl_->profiler.before(cb, p.name);
    }
    impl_->record_dispatch(cb, p, gx, gy, gz, push, push_bytes);
    if (profiling) impl_->profiler.after(cb);
  }
  dispatches_++;
  impl_->after_command(cost);
}

void Stream::copy(uint64_t src, uint64_t dst, uint64_t bytes) {
  if (bytes == 0) return;
  BufferSlice s = impl_->dev.resolve(src), d = impl_->dev.resolve(dst);
  if (s.offset + bytes > s.segment_size || d.offset + bytes > d.segment_size) {
    throw InvalidArgument("vkml: copy range crosses a buffer boundary");
  }
  std::lock_guard<std::mutex> lock(mu_);
  impl_->vk.check_alive();
  MemRange r{src, bytes}, w{dst, bytes};
  Impl::Command c{Impl::Command::Kind::kCopy};
  c.src = reinterpret_cast<VkBuffer>(s.buffer);
  c.src_offset = s.offset;
  c.dst = reinterpret_cast<VkBuffer>(d.buffer);
  c.dst_offset = d.offset;
  c.bytes = bytes;
  BufferSlice pinned;
  c.host_read_after = d.mapped && resolve_pinned(impl_->dev, dst, &pinned);
  if (impl_->record_or_hold(c, {&r, 1}, {&w, 1})) barriers_++;
  impl_->after_command(bytes / 4);
}

void Stream::fill(uint64_t dst, uint64_t bytes, uint32_t pattern) {
  if (bytes == 0) return;
  if ((dst | bytes) & 3) throw InvalidArgument("vkml: fill needs 4-byte alignment");
  BufferSlice d = impl_->dev.resolve(dst);
  std::lock_guard<std::mutex> lock(mu_);
  impl_->vk.check_alive();
  MemRange w{dst, bytes};
  Impl::Command c{Impl::Command::Kind::kFill};
  c.dst = reinterpret_cast<VkBuffer>(d.buffer);
  c.dst_offset = d.offset;
  c.bytes = bytes;
  c.pattern = pattern;
  if (impl_->record_or_hold(c, {}, {&w, 1})) barriers_++;
  impl_->after_command(bytes / 4);
}

void Stream::upload(const void* host, uint64_t dst, uint64_t bytes) {
  if (bytes == 0) return;
  BufferSlice d = impl_->dev.resolve(dst);
  if (d.offset + bytes > d.segment_size) throw InvalidArgument("vkml: upload out of range");
  std::lock_guard<std::mutex> lock(mu_);
  impl_->vk.check_alive();
  impl_->refuse_in_capture("an upload from host memory");
  const auto* src = static_cast<const uint8_t*>(host);
  for (uint64_t done = 0; done < bytes;) {
    uint64_t n = std::min(bytes - done, kStagingChunk);
    HostBuffer& hb = impl_->acquire_staging(n);
    std::memcpy(hb.raw.mapped, src + done, n);
    MemRange w{dst + done, n};
    Impl::Command c{Impl::Command::Kind::kCopy};
    c.src = hb.raw.buffer;
    c.dst = reinterpret_cast<VkBuffer>(d.buffer);
    c.dst_offset = d.offset + done;
    c.bytes = n;
    if (impl_->record_or_hold(c, {}, {&w, 1})) barriers_++;
    hb.busy_until = impl_->submitted + 1;  // held or not, it goes in the next submission
    impl_->after_command(n / 4);
    done += n;
  }
}

void Stream::download(uint64_t src, void* host, uint64_t bytes) {
  if (bytes == 0) return;
  BufferSlice s = impl_->dev.resolve(src);
  if (s.offset + bytes > s.segment_size) throw InvalidArgument("vkml: download out of range");
  std::lock_guard<std::mutex> lock(mu_);
  impl_->vk.check_alive();
  impl_->refuse_in_capture("a download to host memory");
  auto* out = static_cast<uint8_t*>(host);
  MemRange r{src, bytes};
  if (s.mapped) {
    // Unified memory: wait for the writers, then read the memory directly.
    impl_->order({&r, 1}, {});
    impl_->barrier(VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
    impl_->wait(impl_->submit(true));
    std::memcpy(out, static_cast<uint8_t*>(s.mapped) + s.offset, bytes);
    return;
  }
  for (uint64_t done = 0; done < bytes;) {
    uint64_t n = std::min(bytes - done, kStagingChunk);
    HostBuffer& hb = impl_->acquire_staging(n);
    MemRange rr{src + done, n};
    VkCommandBuffer cb = impl_->begin();
    if (impl_->order({&rr, 1}, {})) barriers_++;
    VkBufferCopy region{s.offset + done, 0, n};
    vk::vkCmdCopyBuffer(cb, reinterpret_cast<VkBuffer>(s.buffer), hb.raw.buffer, 1, &region);
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vk::vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1,
                             &mb, 0, nullptr, 0, nullptr);
    uint64_t value = impl_->submit(true);
    hb.busy_until = value;
    impl_->wait(value);
    std::memcpy(out + done, hb.raw.mapped, n);
    done += n;
  }
}

uint64_t Stream::params(const void* data, uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  impl_->vk.check_alive();
  auto& im = *impl_;
  const uint64_t data_bytes = bytes;  // what the caller owns; the slot is rounded up to 16
  bytes = (bytes + 15) & ~15ull;
  if (bytes > kParamsChunk) throw InvalidArgument("vkml: parameter block too large");
  if (im.capture) return im.capture_params(data, data_bytes, bytes);
  if (im.params_index < 0 || im.params_offset + bytes > kParamsChunk) {
    if (im.params_index >= 0) {
      if (im.params_pending.empty()) {
        im.params_chunks[im.params_index].busy_until = im.submitted + 1;
      } else {
        im.retiring.push_back(im.params_index);  // stays busy until its blocks' dispatches
      }
    }
    im.poll();
    im.params_index = -1;
    for (size_t i = 0; i < im.params_chunks.size(); ++i) {
      if (im.params_chunks[i].busy_until <= im.completed) {
        im.params_index = static_cast<int>(i);
        break;
      }
    }
    if (im.params_index < 0) {
      HostBuffer hb;
      hb.raw = im.vk.create_buffer(kParamsChunk, im.vk.params_type, true);
      if (!hb.raw) throw OutOfMemoryError("vkml: out of memory for parameters", kParamsChunk, 0, 0, 0);
      im.params_chunks.push_back(hb);
      im.params_index = static_cast<int>(im.params_chunks.size() - 1);
    }
    im.params_chunks[im.params_index].busy_until = UINT64_MAX;  // in use until retired
    im.params_offset = 0;
  }
  auto& chunk = im.params_chunks[im.params_index];
  std::memcpy(static_cast<uint8_t*>(chunk.raw.mapped) + im.params_offset, data, data_bytes);
  uint64_t addr = chunk.raw.address + im.params_offset;
  im.params_offset += bytes;
  im.params_pending[std::this_thread::get_id()]++;
  return addr;
}

void Stream::set_submit_cost_limit(uint64_t cost) {
  std::lock_guard<std::mutex> lock(mu_);
  impl_->cost_limit = cost;
}

uint64_t Stream::submit_cost_limit() {
  std::lock_guard<std::mutex> lock(mu_);
  return impl_->cost_limit;
}

void Stream::set_submit_budget_ms(double ms) {
  std::lock_guard<std::mutex> lock(mu_);
  impl_->set_budget(ms);
}

double Stream::submit_budget_ms() {
  std::lock_guard<std::mutex> lock(mu_);
  return impl_->budget_ms;
}

SubmissionTimes Stream::submission_times(bool reset) {
  std::lock_guard<std::mutex> lock(mu_);
  impl_->poll();
  SubmissionTimes t = impl_->clock.times();
  if (reset) impl_->clock.reset_times();
  return t;
}

void Stream::set_submit_ramp(bool on) {
  std::lock_guard<std::mutex> lock(mu_);
  impl_->ramp = on;
  if (!on) impl_->ramp_limit = 0;
}

bool Stream::submit_ramp() {
  std::lock_guard<std::mutex> lock(mu_);
  return impl_->ramp;
}

uint64_t Stream::flush() {
  std::lock_guard<std::mutex> lock(mu_);
  impl_->vk.check_alive();
  impl_->refuse_in_capture("a flush or synchronize");
  uint64_t before = impl_->submitted;
  uint64_t v = impl_->submit(false);
  if (v != before) submits_++;
  return v;
}

void Stream::wait(uint64_t value) {
  std::lock_guard<std::mutex> lock(mu_);
  impl_->vk.check_alive();
  impl_->refuse_in_capture("a host wait");
  impl_->wait(value);
}

uint64_t Stream::completed_value() {
  std::lock_guard<std::mutex> lock(mu_);
  impl_->vk.check_alive();
  return impl_->poll();
}

uint64_t Stream::pending_value() {
  std::lock_guard<std::mutex> lock(mu_);
  const bool recorded = impl_->current || !impl_->held.empty();
  return recorded ? impl_->submitted + 1 : impl_->submitted;
}


void set_profiling(Stream& stream, bool on) { StreamAccess::set_profiling(stream, on); }

std::map<std::string, KernelTime> kernel_times(Stream& stream, bool reset) {
  return StreamAccess::kernel_times(stream, reset);
}

uint32_t Stream::write_timestamp() {
  std::lock_guard<std::mutex> lock(mu_);
  impl_->vk.check_alive();
  if (!impl_->queries) throw NotSupported("vkml: this device has no compute timestamps");
  impl_->refuse_in_capture("a timestamp");
  uint32_t id = impl_->next_query++ % kTimestampQueries;
  VkCommandBuffer cb = impl_->begin();
  vk::vkCmdResetQueryPool(cb, impl_->queries, id, 1);
  vk::vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, impl_->queries, id);
  return id;
}

double Stream::read_timestamp_ns(uint32_t id) {
  synchronize();
  uint64_t ticks = 0;
  impl_->vk.check(vk::vkGetQueryPoolResults(impl_->vk.device, impl_->queries, id, 1, sizeof(ticks),
                                            &ticks, sizeof(ticks),
                                            VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
                  "vkGetQueryPoolResults");
  return static_cast<double>(ticks) * impl_->dev.caps().timestamp_period_ns;
}

}  // namespace vkml
