% call_costs.m: where a poolkit MEX call's time goes besides the kernel, on seed 000's case (Linux only: reads
% /proc/self). Run from the repository root after build.m:   octave-cli matlab/examples/call_costs.m
% Prints: the fixed cost of a call (a 4x4 input: the .m wrapper, argument parsing, the threads' wake-up); the
% minor page faults per call and the huge pages backing each output (AnonHugePages of /proc/self/smaps while
% the output is held), against 4 KiB faults where the huge-page advice took no effect; and the same call into
% fresh arrays vs the kernel alone (pkmex called directly, skipping the wrapper).
here = fileparts(mfilename('fullpath'));
addpath(fullfile(here, '..'), here);  % poolkit, and median_ms.m beside this file
function n = minor_faults()
  s = fileread('/proc/self/stat');
  f = strsplit(strtrim(s(find(s == ')', 1, 'last') + 2:end)), ' ');
  n = str2double(f{8});  % field 10 of stat: minflt (fields counted after the command name's ')')
end
function kb = huge_kb()
  s = fileread('/proc/self/smaps');
  v = regexp(s, 'AnonHugePages:\s+(\d+) kB', 'tokens');
  kb = sum(cellfun(@(c) str2double(c{1}), v));
end
o = {'Stride', 2, 'DataFormat', 'SSCB'};
x = single(randn(4, 4, 1, 1));
printf('fixed cost of a call (4x4 input, median of 201): poolkit.maxpool %.3f ms, pkmex directly %.3f ms\n', ...
       median_ms(@() poolkit.maxpool(x, [2 2], o{:}), 201), median_ms(@() poolkit.pkmex('maxpool', x, [2 2], o{:}), 201));
randn('seed', 0);
X = single(randn(32, 32, 2, 16384));
[Y, I, sz] = poolkit.maxpool(X, [2 2], o{:});
[~, Ic, info] = poolkit.maxpool(X, [2 2], o{:}, 'Indices', 'compact');
calls = {
  'maxpool',                    @() poolkit.pkmex('maxpool', X, [2 2], o{:}),                   numel(Y) * 4;
  'maxpool + indx (linear)',    @() nthargout(2, @poolkit.pkmex, 'maxpool', X, [2 2], o{:}),  numel(Y) * 12;
  'maxpool_backward (compact)', @() poolkit.maxpool_backward(Y, Ic, info),                      numel(X) * 4;
  'maxunpool (linear)',         @() poolkit.maxunpool(Y, I, sz),                                numel(X) * 4;
};
printf('\n%-28s %9s %12s %16s %14s\n', 'call', 'ms', 'faults/call', 'output MiB', 'huge MiB held');
for k = 1:size(calls, 1)
  f = calls{k, 2};
  t = median_ms(f, 9);
  f0 = minor_faults();
  for r = 1:10, f(); end
  per = (minor_faults() - f0) / 10;
  h0 = huge_kb();
  held = f();  %#ok<NASGU> held while smaps is read
  h1 = huge_kb();
  clear held;
  printf('%-28s %9.2f %12.0f %16.1f %14.1f\n', calls{k, 1}, t, per, calls{k, 3} / 2^20, (h1 - h0) / 1024);
end
printf('(a 2 MiB huge page is one fault; 4 KiB pages would be 256 faults per MiB)\n');
printf('transparent huge pages: %s', fileread('/sys/kernel/mm/transparent_hugepage/enabled'));
