function y = to_host(y, host)
%TO_HOST  The result back in the caller's array type: gpuArray and (formatted) dlarray as the input was.
%   In Octave host is always plain and y is returned as is. The MATLAB branch is NOT RUN HERE.
if host.gpu
  y = gpuArray(y);
end
if host.dlarray
  y = dlarray(y, host.fmt);
end
end
