% seed000.m: seed 000's table in Octave (or MATLAB). X = single(randn(32, 32, 2, 16384)), 'SSCB', 2x2 pooling
% with stride 2: every poolkit MEX call of the forward and backward pass, the best plain Octave code for the same
% job (reshape to expose the 2x2 windows, then max / mean over them), and `poolkit bench --case seed` run
% here in the same session twice: into warm, reused buffers, and with --fresh-outputs (each call's outputs
% allocated anew, as a host returning new arrays must). Run from the repository root after build.m:
%   octave-cli matlab/examples/seed000.m
% Times are medians over `reps` rounds after a warm-up round, each round calling every row once in turn (the
% machine's memory may change pace within seconds; alternating keeps the rows' ratios within one state), and
% the bench rows the mean of a run before and a run after them. Octave runs +poolkit/pkmex.oct (no copy of the outputs);
% each call's outputs are fresh arrays, whose pages the kernel zeroes on first write: the 'fresh array' rows time
% zeros() of the output's size in Octave. The 'retained' columns run the same rounds again after
% poolkit.retain_memory(true), where each output reuses the pages freed by the one before it; run the script
% under GLIBC_TUNABLES=glibc.malloc.hugetlb=1 for those pages to be huge pages, as a training loop would.
here = fileparts(mfilename('fullpath'));
addpath(fullfile(here, '..'), here);  % poolkit, and median_ms.m / rounds_ms.m beside this file
reps = 15;
H = 32; W = 32; C = 2; B = 16384;
randn('seed', 0);
X = single(randn(H, W, C, B));
o = {'Stride', 2, 'DataFormat', 'SSCB'};
% The outputs the backward calls take.
[Y, I, sz] = poolkit.maxpool(X, [2 2], o{:});
[~, Ic, info] = poolkit.maxpool(X, [2 2], o{:}, 'Indices', 'compact');
dY = Y;
Z = poolkit.maxunpool(Y, I, sz);
% Bytes each call reads and writes (X, Y single; linear indices double, compact uint8), for the charts.
nX = numel(X) * 4; nY = numel(Y) * 4; nI = numel(Y) * 8; nC = numel(Y);
moved = [nX + nY, nX + nY + nI, nX + nY + nC, nX + nY, nY + nI + nX, nY + nC + nX, nY + nI + nX, nY + nC + nX, ...
         nY + nX, nX + nI + nY, nX + nC + nY, nY, nX];
% name, call, the `poolkit bench` row doing the same work in C++ ('' when it has none)
rows = {
  'maxpool',                      @() poolkit.maxpool(X, [2 2], o{:}),                   'max-fwd';
  'maxpool + indx (linear)',      @() nth_out(2, @poolkit.maxpool, X, [2 2], o{:}),      'max-fwd +int64 argmax';
  'maxpool + indx (compact)',     @() nth_out(2, @poolkit.maxpool, X, [2 2], o{:}, 'Indices', 'compact'), ...
                                                                                         'max-fwd +uint8 argmax';
  'avgpool',                      @() poolkit.avgpool(X, [2 2], o{:}),                   'avg-fwd';
  'maxunpool (linear)',           @() poolkit.maxunpool(Y, I, sz),                       '';
  'maxunpool (compact)',          @() poolkit.maxunpool(Y, Ic, info),                    '';
  'maxpool_backward (linear)',    @() poolkit.maxpool_backward(dY, I, sz),               'max-bwd from int64';
  'maxpool_backward (compact)',   @() poolkit.maxpool_backward(dY, Ic, info),            'max-bwd from uint8';
  'avgpool_backward',             @() poolkit.avgpool_backward(dY, size(X), [2 2], o{:}), 'avg-bwd';
  'maxunpool_backward (linear)',  @() poolkit.maxunpool_backward(Z, I),                  '';
  'maxunpool_backward (compact)', @() poolkit.maxunpool_backward(Z, Ic, info),           '';
  'fresh array of size(Y)',       @() zeros(size(Y), 'single'),                          '';
  'fresh array of size(X)',       @() zeros(size(X), 'single'),                          '';
};
% Plain Octave for the same jobs: the windows as dimensions 1 and 3 of a reshape.
win = @(A) reshape(A, 2, H/2, 2, W/2, C*B);
plain = {
  'maxpool',             @() reshape(max(max(win(X), [], 1), [], 3), H/2, W/2, C, B);
  'maxpool + indx',      @() nth_out(2, @max, reshape(permute(win(X), [1 3 2 4 5]), 4, []), [], 1);
  'avgpool',             @() reshape(sum(sum(win(X), 1), 3) / 4, H/2, W/2, C, B);
  'maxunpool',           @() unpool_plain(Y, I, size(X));
  'avgpool_backward',    @() repelem(dY / 4, 2, 2);
  'maxunpool_backward',  @() Z(I);
};
function out = nth_out(n, f, varargin)
  outs = cell(1, n);
  [outs{:}] = f(varargin{:});
  out = outs{n};
end
function s = ifelse_text(c, other)
  if isempty(c), s = other; else, s = c{1}; end
end
function Z = unpool_plain(Y, I, s)
  Z = zeros(s, 'single');
  Z(I) = Y;
end
% poolkit bench in the same session, same machine: the C++ library alone on the same case (NCHW is the
% layout of 'SSCB' as the MEX hands it to the core).
root = fileparts(fileparts(here));
bench = '';
for d = {getenv('POOLKIT_BUILD_DIR'), fullfile(root, 'build', 'release'), fullfile(root, 'build', 'dev'), ...
         fullfile(root, 'build', 'matlab')}
  if ~isempty(d{1}) && exist(fullfile(d{1}, 'tools', 'poolkit'), 'file')
    bench = fullfile(d{1}, 'tools', 'poolkit');
    break;
  end
end
function [warm, fresh] = run_bench(bench)
  warm = ''; fresh = '';
  if isempty(bench), return; end
  [~, warm] = system([bench ' bench --case seed --layout nchw 2>/dev/null']);
  [~, fresh] = system([bench ' bench --case seed --layout nchw --fresh-outputs 2>/dev/null']);
end
[bench_out, bench_fresh] = run_bench(bench);
% the median ms of a bench row (NaN where the run has none)
function ms = bench_ms(out, row)
  ms = NaN;
  if isempty(row), return; end
  m = regexp(out, ['nchw\s+' regexprep(row, '\+', '\\+') '( float32)?\s+([0-9.]+)'], 'tokens', 'once');
  if ~isempty(m), ms = str2double(m{end}); end
end
printf('seed 000 in Octave %s: X = single(randn(32, 32, 2, 16384)), ''SSCB'', 2x2 stride 2; median of %d rounds, ms\n', ...
       version(), reps);
printf('GLIBC_TUNABLES=%s (glibc.malloc.hugetlb=1 puts malloc''s heap in huge pages: the retained rows'' pages)\n', ...
       getenv('GLIBC_TUNABLES'));
nk = size(rows, 1) - 2;  % the poolkit rows in rounds; the fresh arrays (Octave's zeros) after them
t = [rounds_ms(rows(1:nk, 2), reps); median_ms(rows{end - 1, 2}, reps); median_ms(rows{end, 2}, reps)];
% Plain Octave in the same state of glibc's malloc as the rows above.
function tp = plain_ms(plain)
  tp = zeros(size(plain, 1), 1);
  for k = 1:size(plain, 1)
    tp(k) = median_ms(plain{k, 2}, 3);
  end
end
tp = plain_ms(plain);
% The same rounds with freed memory kept for the next arrays (poolkit.retain_memory: glibc only, the user's
% choice), so that outputs reuse the pages of the arrays freed before them instead of fresh, zeroed pages.
tr = NaN(size(t)); tpr = NaN(size(tp));
try
  poolkit.retain_memory(true);
  tr = [rounds_ms(rows(1:nk, 2), reps); median_ms(rows{end - 1, 2}, reps); median_ms(rows{end, 2}, reps)];
  tpr = plain_ms(plain);
  poolkit.retain_memory(false);
catch err
  printf('retained rows left out: %s\n', err.message);
end
[bench_out2, bench_fresh2] = run_bench(bench);
tb_all = NaN(numel(t), 1); tf_all = NaN(numel(t), 1);
for k = 1:numel(t)
  tb_all(k) = (bench_ms(bench_out, rows{k, 3}) + bench_ms(bench_out2, rows{k, 3})) / 2;
  tf_all(k) = (bench_ms(bench_fresh, rows{k, 3}) + bench_ms(bench_fresh2, rows{k, 3})) / 2;
end
printf('%-30s %8s %9s   %-22s %10s %9s %10s %9s %12s %9s\n', 'poolkit MEX call', 'ms', 'x maxpool', ...
       'poolkit bench row', 'warm ms', 'MEX/warm', 'fresh ms', 'MEX/fresh', 'retained ms', 'x maxpool');
for k = 1:numel(t)
  printf('%-30s %8.2f %9.2f   %-22s %10.2f %9.2f %10.2f %9.2f %12.2f %9.2f\n', rows{k, 1}, t(k), t(k) / t(1), ...
         rows{k, 3}, tb_all(k), t(k) / tb_all(k), tf_all(k), t(k) / tf_all(k), tr(k), tr(k) / tr(1));
end
printf('\n%-30s %9s %10s %12s %10s\n', 'plain Octave, same job', 'ms', 'x poolkit', 'retained ms', 'x poolkit');
match = [1 2 4 5 9 10];  % the poolkit row doing the same job
for k = 1:numel(tp)
  printf('%-30s %9.2f %10.1f %12.2f %10.1f\n', plain{k, 1}, tp(k), tp(k) / t(match(k)), tpr(k), ...
         tpr(k) / tr(match(k)));
end
% The run as a table for bench/octave_charts.py (poolkit's speed-up over plain Octave, fraction of copy).
to_all = NaN(numel(t), 1);
to_all(match) = tp;
% poolkit bench times a plain copy before each row: the fastest of them is the copy bandwidth least disturbed
copies = regexp(bench_out, 'float32\s+[0-9.]+\s+[0-9.]+\s+([0-9.]+)', 'tokens');
copy = {};
if ~isempty(copies), copy = {sprintf('%.1f', max(cellfun(@(c) str2double(c{1}), copies)))}; end
csv = fullfile(root, 'bench', 'RESULTS-octave-seed000.csv');
f = fopen(csv, 'w');
fprintf(f, '# seed000.m in Octave %s, median of %d rounds; copy GB/s %s\n', version(), reps, ...
        ifelse_text(copy, 'n/a'));
fprintf(f, 'call,bytes,poolkit_mex_ms,plain_octave_ms,poolkit_bench_ms,poolkit_bench_fresh_ms,poolkit_mex_retained_ms\n');
for k = 1:numel(t) - 2  % (not the fresh-array rows)
  fprintf(f, '%s,%d,%.4f,%.4f,%.4f,%.4f,%.4f\n', rows{k, 1}, moved(k), t(k), to_all(k), tb_all(k), tf_all(k), tr(k));
end
fclose(f);
% The charts need a Python with matplotlib: POOLKIT_PYTHON, else python3 on PATH.
py = getenv('POOLKIT_PYTHON');
if isempty(py), py = 'python3'; end
printf('\nwrote %s; charts: %s bench/octave_charts.py %s\n', csv, py, csv);
system([py ' ' fullfile(root, 'bench', 'octave_charts.py') ' ' csv]);
for b = {bench_out, bench_fresh; bench_out2, bench_fresh2}'
  printf('\n%s bench --case seed --layout nchw\n%s', bench, b{1});
  printf('\n%s bench --case seed --layout nchw --fresh-outputs\n%s', bench, b{2});
end
