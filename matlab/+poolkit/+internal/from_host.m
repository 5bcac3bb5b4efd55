function [x, args, host] = from_host(x, args)
%FROM_HOST  MATLAB's own array types into what the MEX takes (MATLAB only; in Octave it returns x unchanged).
%   A formatted dlarray gives its data and, unless 'DataFormat' is given, its format dims(x); a gpuArray is
%   gathered to the CPU (until a CUDA MEX exists: one transfer each way per call, bounded by PCIe bandwidth);
%   strings become character vectors. NOT RUN HERE: there is no MATLAB on poolkit's machines.
host = struct('fmt', '', 'gpu', false, 'dlarray', false);
if exist('OCTAVE_VERSION', 'builtin')
  return;
end
for i = 1:numel(args)
  if isstring(args{i}), args{i} = char(args{i}); end
end
if isa(x, 'dlarray')
  host.dlarray = true;
  host.fmt = dims(x);
  x = extractdata(x);
  if ~isempty(host.fmt) && ~any(strcmpi(args(1:2:end), 'DataFormat'))
    args = [args, {'DataFormat', host.fmt}];
  end
end
if isa(x, 'gpuArray')
  host.gpu = true;
  x = gather(x);
end
end
