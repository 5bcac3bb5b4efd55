function dX = maxunpool_backward(dZ, indx, info)
%MAXUNPOOL_BACKWARD  Gradient of poolkit.maxunpool with respect to its X: dX = dZ(indx), shaped like indx.
%   dX = poolkit.maxunpool_backward(dZ, indx)            % linear indices
%   dX = poolkit.maxunpool_backward(dZ, indx, info)      % compact indices and maxpool's third output
[dZ, ~, host] = poolkit.internal.from_host(dZ, {});
if nargin < 3
  dX = poolkit.pkmex('maxunpool_backward', dZ, indx);
else
  dX = poolkit.pkmex('maxunpool_backward', dZ, indx, info.PoolSize, info.Options{:});
end
dX = poolkit.internal.to_host(dX, host);
end
