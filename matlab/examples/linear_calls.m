% linear_calls.m: the seed-000 calls that take or give MATLAB's linear indices, and their compact counterparts,
% against maxpool, in rounds (every row once in turn, 15 rounds after a warm-up round, medians), with fresh output
% pages and then after poolkit.retain_memory(true). Prints ms and x maxpool for both. Used to compare two MEX
% builds in alternation: pass the folder holding +poolkit as the first argument (default: this repository's).
%   GLIBC_TUNABLES=glibc.malloc.hugetlb=1 octave-cli matlab/examples/linear_calls.m [/path/to/matlab]
here = fileparts(mfilename('fullpath'));
args = {};
if exist('OCTAVE_VERSION', 'builtin'), args = argv(); end  % (the folder argument: Octave's command line)
if ~isempty(args), addpath(args{1}); else, addpath(fullfile(here, '..')); end
addpath(here);  % rounds_ms.m
reps = 15;
randn('seed', 0);
X = single(randn(32, 32, 2, 16384));
o = {'Stride', 2, 'DataFormat', 'SSCB'};
[Y, I, sz] = poolkit.maxpool(X, [2 2], o{:});
[~, Ic, info] = poolkit.maxpool(X, [2 2], o{:}, 'Indices', 'compact');
Z = poolkit.maxunpool(Y, I, sz);
rows = {
  'maxpool',                       @() poolkit.maxpool(X, [2 2], o{:});
  'maxpool + indx (linear)',       @() nthargout(2, @poolkit.maxpool, X, [2 2], o{:});
  'maxpool + indx (compact)',      @() nthargout(2, @poolkit.maxpool, X, [2 2], o{:}, 'Indices', 'compact');
  'maxunpool (linear)',            @() poolkit.maxunpool(Y, I, sz);
  'maxpool_backward (linear)',     @() poolkit.maxpool_backward(Y, I, sz);
  'maxunpool_backward (linear)',   @() poolkit.maxunpool_backward(Z, I);
  'maxunpool (compact)',           @() poolkit.maxunpool(Y, Ic, info);
  'maxpool_backward (compact)',    @() poolkit.maxpool_backward(Y, Ic, info);
  'maxunpool_backward (compact)',  @() poolkit.maxunpool_backward(Z, Ic, info);
};
t = rounds_ms(rows(:, 2), reps);
poolkit.retain_memory(true);
tr = rounds_ms(rows(:, 2), reps);
poolkit.retain_memory(false);
printf('%-30s %8s %9s %12s %9s\n', 'call', 'ms', 'x maxpool', 'retained ms', 'x maxpool');
for k = 1:size(rows, 1)
  printf('%-30s %8.2f %9.2f %12.2f %9.2f\n', rows{k, 1}, t(k), t(k) / t(1), tr(k), tr(k) / tr(1));
end
